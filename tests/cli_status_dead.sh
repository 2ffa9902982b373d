# A killed process's slot is never counted: after kill -9 of one of two
# processes (before anything sweeps its slot: the survivor makes no CUDA
# call), status and metrics show only the survivor's bytes, and list the
# dead one as exited. Negative control: cudacap_countdead (built with
# -DCLI_TEST_COUNT_DEAD, which counts dead slots) must fail this test.
. "$(dirname "$0")/cli_lib.sh"
C=$CUDACAP
export CUDACAP_SIM_CTX_MEM=64m CUDACAP_SIM_MEM=8g
M=$((1 << 20))
mkdir -p $CUDACAP_ROOT
for t in a b; do
  mib=$([ $t = a ] && echo 100 || echo 50)
  $C run --mem 1g --state $CUDACAP_ROOT/c -- $WORKER hold --mib $mib --seconds 30 \
    --ready $CLI_TEST_TMP/ready.$t >$CLI_TEST_TMP/out.$t 2>&1 & bgpids+=($!)
  wait_for $CLI_TEST_TMP/ready.$t 20 || fail "worker $t did not start"
done
pa=$(worker_pid $CLI_TEST_TMP/out.a)
expect 0 "status before" $C status --json
[ "$(jfield c gpu memory_used_bytes)" = $((278 * M)) ] && ok "both counted" || fail "before: $(jfield c gpu memory_used_bytes)"
kill -9 $pa
for i in $(seq 50); do kill -0 $pa 2>/dev/null || break; sleep 0.1; done
sleep 0.2
expect 0 "status after kill -9" $C status --json
[ "$(jfield c gpu memory_used_bytes)" = $((114 * M)) ] && ok "dead process not counted" || fail "after: $(jfield c gpu memory_used_bytes)"
v=$(jfield c pid alive $pa)
[ "$v" = false ] || [ -z "$v" ] && ok "dead process shown exited or gone" || fail "a alive=$v"
expect 0 "metrics after kill -9" $C metrics
has 'cudacap_fb_used_bytes{cudacap_container="c",gpu="0",UUID="GPU-5ac1ca00-0000-4000-8000-000000000000",Hostname="testnode"} '$((114 * M)) "metrics agree"
has 'cudacap_processes{cudacap_container="c",Hostname="testnode"} 1' "one live process"
finish
