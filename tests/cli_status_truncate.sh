# A region truncated while status reads it gives a short
# read shown as "truncated", never SIGBUS. $CUDACAP is a build that pauses
# inside each region read until the file changes size (CLI_TEST_PEEK_PAUSE),
# so the truncation lands at a known point: after the open, before the data
# is read. The negative control is the same build reading through a shared
# mapping (CLI_TEST_MMAP_PEEK), as the command did before: it dies of
# SIGBUS there and this must fail (checked: exit 135 on every case).
. "$(dirname "$0")/cli_lib.sh"
C=$CUDACAP
R=$CUDACAP_ROOT
mkdir -p $R
$C run --mem 1g --sm 30 --state $CLI_TEST_TMP/good -- bash -c \
  "$WORKER hold --mib 1 --seconds 0 && $WORKER spin --us 1000 --seconds 1" >/dev/null 2>&1 || fail "worker"
for f in memory.region compute.region; do
  for size in 0 4096; do
    for mode in "" --json; do
      rm -rf $R/*; mkdir -p $R/c; cp $CLI_TEST_TMP/good/$f $R/c/
      # Emptied here, not by the background redirection: that one may run
      # after the wait below read the last case's "paused" (the file was then
      # cut before status opened it: "empty", once in 8 runs at -j3).
      : >$CLI_TEST_TMP/err
      $C status $mode >$CLI_TEST_TMP/out 2>$CLI_TEST_TMP/err & p=$!
      for i in $(seq 600); do grep -q "peek: paused" $CLI_TEST_TMP/err && break; sleep 0.05; done # 30 s: loaded ASan runs
      truncate -s $size $R/c/$f
      wait $p; rc=$?
      out=$(cat $CLI_TEST_TMP/out)
      [ $rc = 0 ] && ok "$f cut to $size during status $mode: exit 0" ||
        fail "$f cut to $size during status $mode: exit $rc $(cat $CLI_TEST_TMP/err)"
      has "truncated" "$f cut to $size during status $mode: shown truncated"
    done
  done
done
finish
