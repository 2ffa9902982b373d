# The exporter under hostile clients: a request trickled
# a byte a second is dropped at its 2 s deadline (counted from accept, not
# per read), and while 200 idle connections and 20 slow ones press on it
# (more than its table of 64 holds), every scrape is answered within 1 s. The negative control runs this against a build that, with its
# connection table full, waits for a deadline instead of dropping the oldest
# idle connection (CLI_TEST_NO_EVICT), and must fail (checked: its scrapes
# take 2 s or more, queued behind the idle ones).
. "$(dirname "$0")/cli_lib.sh"
C=$CUDACAP
R=$CUDACAP_ROOT
$C run --mem 1g --state $R/c -- $WORKER hold --mib 1 --seconds 0 >/dev/null 2>&1 || fail "worker"
start_listener || fail "listener did not start: $(cat $CLI_TEST_TMP/listen.err)"
expect 0 "a scrape, no load" $HTTPPROBE scrape $port 1000
# Watched for 10 s (the prober stops once all are dropped): an exporter
# starved of a core beside two suites accepted late and closed none in 5 s
# once. A deadline per read would never close a byte-a-second trickle, and
# one counted from accept closes it 2 s after; a stall only delays that.
expect 0 "slowloris alone" timeout -k 2 20 $HTTPPROBE slowloris $port 3 10
last=$(printf '%s' "$out" | sed -n 's/.*closed 3 of 3, last after \([0-9]*\) ms.*/\1/p')
[ -n "$last" ] && [ "$last" -ge 1500 ] && [ "$last" -le 9000 ] && ok "dropped at the request deadline ($last ms)" ||
  fail "slowloris: $out"
# ready_of FILE: until a prober printed "ready".
ready_of() { for i in $(seq 100); do grep -q ready $1 2>/dev/null && return 0; sleep 0.05; done; return 1; }
$HTTPPROBE idle $port 200 4 >$CLI_TEST_TMP/idle.out 2>&1 & bgpids+=($!); ip=$!
ready_of $CLI_TEST_TMP/idle.out || fail "idle prober: $(cat $CLI_TEST_TMP/idle.out)"
$HTTPPROBE slowloris $port 20 4 >$CLI_TEST_TMP/slow.out 2>&1 & bgpids+=($!); sp=$!
ready_of $CLI_TEST_TMP/slow.out || fail "slow prober: $(cat $CLI_TEST_TMP/slow.out)"
worst=0
for i in $(seq 10); do # within the first 1.5 s, while the idle connections are there
  out=$($HTTPPROBE scrape $port 1000 2>&1); rc=$?
  ms=$(printf '%s' "$out" | sed -n 's/.* after \([0-9]*\) ms.*/\1/p')
  [ $rc = 0 ] || fail "scrape $i under load: $out"
  [ -n "$ms" ] && [ "$ms" -gt $worst ] && worst=$ms
  sleep 0.1
done
[ $worst -le 1000 ] && ok "10 scrapes under 200 idle + 20 slow connections, slowest $worst ms" || fail "slowest scrape $worst ms"
wait $ip $sp
grep -q "closed 20 of 20" $CLI_TEST_TMP/slow.out && ok "every slow connection dropped ($(cat $CLI_TEST_TMP/slow.out))" ||
  fail "slow connections: $(cat $CLI_TEST_TMP/slow.out)"
grep -q "closed 200 of 200" $CLI_TEST_TMP/idle.out && ok "every idle connection dropped" ||
  fail "idle connections: $(cat $CLI_TEST_TMP/idle.out)"
kill -0 $lp && ok "exporter alive" || fail "exporter died"
kill -TERM $lp; wait $lp; rc=$?
[ $rc = 0 ] && ok "stops on SIGTERM with 0" || fail "listener rc $rc"
finish
