# A FIFO, a folder, a hard link or a symbolic link in place of each state
# file: status, top, metrics (also --listen) and prepare
# neither hang nor crash, show the file as "unusable" naming it and why, and
# touch nothing a link points to. Every command runs under a timeout. The
# negative control runs this against a build opening the files blocking
# (CLI_TEST_BLOCKING_OPEN): the FIFO cases hang there, so it must fail
# (checked: it does, on every FIFO case).
. "$(dirname "$0")/cli_lib.sh"
C=$CUDACAP
R=$CUDACAP_ROOT
T=${CLI_HANG_S:-10}
mkdir -p $R
$C run --mem 1g --sm 30 --state $CLI_TEST_TMP/good -- bash -c \
  "$WORKER hold --mib 1 --seconds 0 && $WORKER spin --us 1000 --seconds 1" >/dev/null 2>&1 || fail "worker"
for f in memory.region compute.region sampling.lock; do
  [ -f $CLI_TEST_TMP/good/$f ] || fail "no $f made"
done
cp -a $CLI_TEST_TMP/good $CLI_TEST_TMP/victim # what links point to; must stay as it is
sum() { (cd $CLI_TEST_TMP/victim && stat -c '%n %s %h %a %u' * && md5sum *); }
before=$(sum)
for f in memory.region compute.region sampling.lock; do
  for kind in fifo dir hard sym; do
    d=$R/$kind-${f%%.*}
    mkdir -p $d
    for g in memory.region compute.region sampling.lock; do [ $g = $f ] || cp $CLI_TEST_TMP/good/$g $d/; done
    case $kind in
      fifo) mkfifo $d/$f ;;
      dir) mkdir $d/$f ;;
      hard) ln $CLI_TEST_TMP/victim/$f $d/$f ;;
      sym) ln -s $CLI_TEST_TMP/victim/$f $d/$f ;;
    esac
  done
done
expect 0 "status" timeout -k 1 $T $C status
for kind in fifo dir hard sym; do
  why=$(case $kind in fifo) echo "is a FIFO";; dir) echo "is a folder";; hard) echo "is a file with 2 links";;
        sym) echo "is a symbolic link";; esac)
  for r in memory compute; do
    has "($r region: unusable: $R/$kind-$r/$r.region $why" "$kind in place of $r.region: unusable, named, why"
  done
done
expect 0 "status --json" timeout -k 1 $T $C status --json
has '"name":"fifo-memory","state_dir":"'$R'/fifo-memory","memory_region":"unusable"' "json: unusable"
has '"memory_region_problem":"'$R'/fifo-memory/memory.region is a FIFO"' "json: why"
expect 0 "top" timeout -k 1 $T $C top --iterations 2 --interval 0.1
expect 0 "metrics" timeout -k 1 $T $C metrics
has 'cudacap_region_ok{cudacap_container="sym-compute",Hostname="testnode",region="compute"} 0' "metrics: region not ok"
# A sampling.lock that is not a plain file: the owner is not known, the rest is shown.
has 'cudacap_region_ok{cudacap_container="fifo-sampling",Hostname="testnode",region="memory"} 1' "FIFO lock: regions still read"
start_listener || fail "listener did not start: $(cat $CLI_TEST_TMP/listen.err)"
expect 0 "exporter answers with FIFOs present" timeout -k 1 $T $HTTPPROBE scrape $port $((T * 1000))
kill -9 $lp; wait $lp 2>/dev/null # (a blocking control build would not stop on TERM)
for kind in fifo dir hard sym; do
  for f in memory compute sampling; do
    d=$R/$kind-$f
    rc=0; out=$(timeout -k 1 $T $C prepare $d 2>&1) || rc=$?
    if [ $kind = dir ]; then
      # A folder named like a state file is not something cudacap makes.
      [ $rc = 1 ] && ok "prepare $kind-$f refuses (exit 1)" || fail "prepare $kind-$f: exit $rc: $out"
    else
      [ $rc = 0 ] && ok "prepare $kind-$f (exit 0)" || fail "prepare $kind-$f: exit $rc: $out"
    fi
  done
done
[ "$(sum)" = "$before" ] && ok "link targets untouched" || fail "victim changed: $(sum)"
finish
