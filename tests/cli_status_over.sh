# cudacap status and metrics show the part of a container's memory that went
# beyond its device cap into host memory (oversubscription) apart from the
# device's: a 512 MiB cap with 512 MiB beyond it (cudacap run
# --mem-oversubscribe, through the limits file when run as root), 16 MiB
# contexts; worker a holds 400 MiB (on the device), worker b 300 MiB (past
# the cap: host). Control: the same with --mem-oversubscribe 1m (b, 300 MiB, is refused).
. "$(dirname "$0")/cli_lib.sh"
C=$CUDACAP
export CUDACAP_SIM_CTX_MEM=16m CUDACAP_SIM_MEM=8g
M=$((1 << 20))
OVER=${1:-512m}
start() { # tag mib
  $C run --mem 512m --mem-oversubscribe $OVER --state $CUDACAP_ROOT/c1 -- $WORKER hold --mib $2 --seconds 30 \
    --ready $CLI_TEST_TMP/ready.$1 >$CLI_TEST_TMP/out.$1 2>&1 & bgpids+=($!)
  wait_for $CLI_TEST_TMP/ready.$1 20 || fail "worker $1 did not start: $(cat $CLI_TEST_TMP/out.$1)"
}
mkdir -p $CUDACAP_ROOT
start a 400
start b 300

expect 0 "status --json" $C status --json
[ "$(jfield c1 gpu memory_used_bytes)" = $(((400 + 16 + 16) * M)) ] && ok "device part: a's 400 MiB and two contexts" \
  || fail "c1 device used $(jfield c1 gpu memory_used_bytes)"
[ "$(jfield c1 gpu memory_host_used_bytes)" = $((300 * M)) ] && ok "host part: b's 300 MiB" \
  || fail "c1 host used $(jfield c1 gpu memory_host_used_bytes)"
[ "$(jfield c1 gpu memory_host_limit_bytes)" = $((512 * M)) ] && ok "host limit" \
  || fail "c1 host limit $(jfield c1 gpu memory_host_limit_bytes)"
expect 0 "status table" $C status
has "432 MiB / 512 MiB + host 300 MiB / 512 MiB" "table line"
has "+ host 300 MiB" "b's own line shows its host part"
expect 0 "status --json" $C status --json
case "$out" in *'"memory_host_bytes":'$((300 * M))*) ok "b's host part in the JSON" ;;
  *) fail "no process with memory_host_bytes $((300 * M)): $out" ;; esac
expect 0 "metrics" $C metrics
U='UUID="GPU-5ac1ca00-0000-4000-8000-000000000000"'
has "cudacap_memory_host_used_bytes{cudacap_container=\"c1\",gpu=\"0\",$U,Hostname=\"testnode\"} $((300 * M))" "metric host used"
has "cudacap_memory_host_limit_bytes{cudacap_container=\"c1\",gpu=\"0\",$U,Hostname=\"testnode\"} $((512 * M))" "metric host limit"
has "cudacap_fb_used_bytes{cudacap_container=\"c1\",gpu=\"0\",$U,Hostname=\"testnode\"} $((432 * M))" "fb used: the device part only"
finish
