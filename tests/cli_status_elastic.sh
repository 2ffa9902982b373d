# Elastic limits on the node side: cudacap run --sm-soft, what
# status, --json and metrics show of a container borrowing idle time, and
# the usage errors of a soft limit below the hard one or without one.
. "$(dirname "$0")/cli_lib.sh"
C=$CUDACAP
mkdir -p $CUDACAP_ROOT
expect 2 "--sm-soft below --sm" $C run --sm 30 --sm-soft 20 -- true
has "--sm-soft 20 is below --sm 30" "the message names both"
expect 2 "--sm-soft without --sm" $C run --sm-soft 50 -- true
has "needs --sm PCT" "the message says what is missing"
expect 0 "cdi --sm-soft" $C cdi --name e1 --sm 30 --sm-soft 100 --root $CUDACAP_ROOT --lib /bin/true
has '"CUDACAP_SM_SOFT_LIMIT=100"' "the soft limit in the CDI env"
$C run --sm 30 --sm-soft 100 --state $CUDACAP_ROOT/e -- bash -c \
  "$WORKER spin --us 1000 --seconds 8 & $WORKER spin --us 1000 --seconds 8 & wait" >/dev/null 2>&1 &
bgpids+=($!)
got=
for i in $(seq 60); do
  t1=$(date +%s.%N)
  out=$($C status --json 2>&1)
  [ "$(jfield e gpu borrowing)" = true ] && [ "$(jfield e gpu sm_target_percent)" = 100.0 ] && got=1 && break
  sleep 0.1
done
[ -n "$got" ] && ok "borrowing at the soft limit within 6 s" || fail "not borrowing: $out"
[ "$(jfield e gpu sm_limit_percent)" = 30.0 ] && ok "hard cap 30" || fail "cap $(jfield e gpu sm_limit_percent)"
[ "$(jfield e gpu sm_soft_limit_percent)" = 100.0 ] && ok "soft 100" || fail "soft $(jfield e gpu sm_soft_limit_percent)"
b1=$(jfield e gpu borrowed_device_seconds)
sleep 1
out=$($C status --json 2>&1)
t2=$(date +%s.%N)
b2=$(jfield e gpu borrowed_device_seconds)
# One device lends at most one device-second a second: bounded by the wall
# time from before the first status to after the second (a loaded machine
# stretched "sleep 1" to 1.3-1.9 s between the two snapshots, 2026-12-05).
awk -v a="$b1" -v b="$b2" -v w="$(awk -v x="$t1" -v y="$t2" 'BEGIN { print y - x }')" \
  'BEGIN { exit !(b > a && b - a <= w) }' \
  && ok "borrowed device-seconds grow ($b1 -> $b2 in 1 s)" || fail "borrowed $b1 -> $b2 in $t1 .. $t2"
U='cudacap_container="e",gpu="0",UUID="GPU-5ac1ca00-0000-4000-8000-000000000000",Hostname="testnode"'
NODE_NAME=testnode expect_until 6 "cudacap_sm_borrowing{$U} 1" "metrics" $C metrics
has "cudacap_sm_limit_ratio{$U} 0.3" "hard cap metric"
has "cudacap_sm_soft_limit_ratio{$U} 1" "soft limit metric"
has "cudacap_sm_target_ratio{$U} " "target metric"
has "cudacap_sm_borrowing{$U} 1" "borrowing metric"
has "# TYPE cudacap_sm_borrowed_seconds_total counter" "borrowed counter"
has "cudacap_sm_borrowed_seconds_total{$U} " "borrowed counter value"
if need_tool promtool prometheus; then
  printf '%s\n' "$out" > $CLI_TEST_TMP/e.prom
  lint=$(promtool check metrics < $CLI_TEST_TMP/e.prom 2>&1); rc=$?
  [ $rc = 0 ] && ok "promtool check metrics: clean with elastic series" || fail "promtool ($rc): $lint"
fi
# A hard neighbour beside it: the elastic state then holds a level of
# others' work (not a flag), and status must not call the region corrupt.
# (Up to 10 s: beside a CI run the neighbour's start alone took seconds and
# a 4 s watch saw none of its 3 s of work, 2026-12-05.)
$C run --sm 50 --state $CUDACAP_ROOT/h -- $WORKER spin --us 1000 --seconds 3 >/dev/null 2>&1 &
bgpids+=($!)
got=
for i in $(seq 100); do
  sleep 0.1
  out=$($C status --json 2>&1)
  t=$(jfield e gpu sm_target_percent)
  [ -n "$t" ] && [ "$t" != null ] && awk -v t="$t" 'BEGIN { exit !(t < 90) }' && got=1 && break
done
[ -n "$got" ] && ok "the borrower yields to the hard neighbour (target $t %)" || fail "target ${t:-none}: $out"
hasnt "is corrupt" "a borrower beside others reads as a sound region"
wait ${bgpids[-1]} 2>/dev/null
expect 0 "table" $C status
has "/ 30.0%" "hard cap in the table"
has "elastic: hard 30.0%, soft 100.0%" "elastic line"
finish
