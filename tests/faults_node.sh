# Fault campaign, node side: every state file swapped for a FIFO,
# a folder, a hard link or a symbolic link, filled with random bytes or
# truncated, before and while status, status --json, top and metrics read
# it; the exporter under slow and idle clients; prepare on hostile paths in
# a temporary tree. Each case: no crash (no exit by signal), no hang (every
# command under a timeout), nothing outside the folder touched (the files
# links point to are checksummed). Short by default (CI, ~20 s);
# FAULTS_LONG=1 runs ten times the rounds.
. "$(dirname "$0")/cli_lib.sh"
C=$CUDACAP
R=$CUDACAP_ROOT
V=$CLI_TEST_TMP/victim
N=1; [ "${FAULTS_LONG:-0}" = 1 ] && N=10
cases=0
# run1 DESC CMD...: one case; exit status 0..3 is fine, a signal or a timeout is not.
run1() {
  local desc=$1; shift
  cases=$((cases + 1))
  local o rc; o=$(timeout -k 2 10 "$@" 2>&1); rc=$?
  if [ $rc -ge 124 ]; then fail "$desc: exit $rc (124: hang, >128: signal): $(printf '%s' "$o" | tail -3)"; fi
}
$C run --mem 1g --sm 30 --state $CLI_TEST_TMP/good -- bash -c \
  "$WORKER hold --mib 1 --seconds 0 && $WORKER spin --us 1000 --seconds 1" >/dev/null 2>&1 || fail "worker"
echo x > $CLI_TEST_TMP/good/identity.lock
mkdir -p $V; for f in memory.region compute.region sampling.lock identity.lock; do cp $CLI_TEST_TMP/good/$f $V/; done
vsum() { (cd $V && stat -c '%n %s %h %a %u' * && md5sum *); }
vbefore=$(vsum)
FILES="memory.region compute.region sampling.lock identity.lock"
KINDS="fifo dir hard sym random truncate"
# fresh D: a container folder D with good copies of every file.
fresh() { rm -rf $1; mkdir -p $1; for f in $FILES; do cp $CLI_TEST_TMP/good/$f $1/; done; }
# spoil D FILE KIND: put KIND in place of D/FILE.
spoil() {
  local p=$1/$2
  rm -rf $p
  case $3 in
    fifo) mkfifo $p ;;
    dir) mkdir $p ;;
    hard) ln $V/$2 $p ;;
    sym) ln -s $V/$2 $p ;;
    random) cp $CLI_TEST_TMP/good/$2 $p
            head -c $((RANDOM % 4096 + 1)) /dev/urandom |
              dd of=$p bs=1 seek=$((RANDOM * 32 % $(stat -c %s $p) + 0)) conv=notrunc status=none 2>/dev/null ;;
    truncate) cp $CLI_TEST_TMP/good/$2 $p; truncate -s $((RANDOM % $(stat -c %s $p))) $p ;;
  esac
}
readers() { # desc
  run1 "$1: status" $C status
  run1 "$1: status --json" $C status --json
  run1 "$1: top" $C top --iterations 1
  run1 "$1: metrics" $C metrics
}
t0=$SECONDS
# Before the reads.
for round in $(seq $N); do
  for f in $FILES; do
    for k in $KINDS; do
      rm -rf $R; fresh $R/c; spoil $R/c $f $k
      readers "before: $k in place of $f"
      run1 "before: prepare with $k in place of $f" $C prepare $R/c
    done
  done
done
# During the reads: a mutator swaps and spoils the files of two folders while
# the readers run.
rm -rf $R; fresh $R/c1; fresh $R/c2
(
  end=$((SECONDS + 3 * N))
  set +e
  while [ $SECONDS -lt $end ]; do
    for d in $R/c1 $R/c2; do
      set -- $FILES; shift $((RANDOM % 4)); f=$1
      set -- $KINDS; shift $((RANDOM % 6)); k=$1
      [ $((RANDOM % 3)) = 0 ] && fresh $d 2>/dev/null || spoil $d $f $k 2>/dev/null
    done
  done
) & mp=$!; bgpids+=($mp)
while kill -0 $mp 2>/dev/null; do readers "during"; done
wait $mp 2>/dev/null
# The exporter: FIFOs in the folders, slow and idle clients, scrapes.
rm -rf $R; fresh $R/c1; spoil $R/c1 memory.region fifo; fresh $R/c2; spoil $R/c2 compute.region random
start_listener || fail "listener did not start: $(cat $CLI_TEST_TMP/listen.err)"
$HTTPPROBE idle $port 200 $((3 * N)) >$CLI_TEST_TMP/idle.out 2>&1 & bgpids+=($!); ip=$!
$HTTPPROBE slowloris $port 20 $((3 * N)) >$CLI_TEST_TMP/slow.out 2>&1 & bgpids+=($!); sp=$!
sleep 0.3
for i in $(seq $((5 * N))); do
  cases=$((cases + 1))
  o=$($HTTPPROBE scrape $port 1000 2>&1) || fail "scrape $i under slow and idle clients: $o"
  sleep 0.2
done
wait $ip $sp
cases=$((cases + 1)); kill -0 $lp 2>/dev/null || fail "exporter died"
kill -9 $lp; wait $lp 2>/dev/null
# prepare on hostile paths, in a temporary tree.
T=$CLI_TEST_TMP/tree
for round in $(seq $N); do
  rm -rf $T; mkdir -p $T/real/sub $T/home
  for f in $FILES; do cp $CLI_TEST_TMP/good/$f $T/real/sub/; done
  echo mine > $T/home/notes.txt
  ln -s $V $T/link; ln -s real $T/reallink; ln -s $V/memory.region $T/filelink
  tsum() { (cd $T && find . -printf '%p %y %s %m %n\n' | sort); }
  tb=$(tsum)
  for p in $T/link $T/link/ $T/link/. $T/link/./ $T//link $T/home/../link $T/reallink/sub $T/reallink/sub/. \
           $T/filelink $T/home $T/home/. $T/real/sub/memory.region; do
    for force in "" --force; do
      cases=$((cases + 1))
      o=$(timeout -k 2 10 $C prepare $force $p 2>&1); rc=$?
      [ $rc = 1 ] || [ $rc = 2 ] || fail "prepare $force $p: exit $rc (want a refusal): $o"
    done
  done
  [ "$(tsum)" = "$tb" ] || fail "hostile prepare changed the tree: $(diff <(echo "$tb") <(tsum))"
  # Links planted inside a folder: removed, never followed.
  mkdir $T/s; for f in $FILES; do ln -s $V/$f $T/s/$f; done; ln $V/identity.lock $T/s/x.lock
  cases=$((cases + 1))
  o=$(timeout -k 2 10 $C prepare --owner 65534:65534 $T/s 2>&1) || fail "prepare of planted links: $o"
done
[ "$(vsum)" = "$vbefore" ] && ok "link targets untouched" || fail "victim changed: $(diff <(echo "$vbefore") <(vsum))"
echo "faults.node: $cases cases in $((SECONDS - t0)) s, $fails failure(s)"
finish
