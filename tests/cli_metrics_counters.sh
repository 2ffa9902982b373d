# The exporter's counters and labels: refusals at the memory cap
# and throttled time under the SM cap counted by the library and exported as
# counters; the gpu label is the NVML index (PCI order), not the minor
# number; a container without a live process is idle; promtool (Debian's
# prometheus package) accepts the exposition, when installed.
. "$(dirname "$0")/cli_lib.sh"
C=$CUDACAP
mkdir -p $CUDACAP_ROOT
U0=GPU-5ac1ca00-0000-4000-8000-000000000000
# Memory: allocations into a 256 MiB cap until one is refused.
expect 0 "capped run" $C run --mem 256m --keep --name mem -- $WORKER alloc --chunk 32 --seconds 0
expect 0 "metrics" $C metrics
L="cudacap_container=\"mem\",gpu=\"0\",UUID=\"$U0\",Hostname=\"testnode\""
# The worker stops at its first CUDA_ERROR_OUT_OF_MEMORY: exactly one refusal
# (the library's internal retry before refusing is not a second one).
printf '%s\n' "$out" | grep -qxF "cudacap_mem_refusals_total{$L} 1" && ok "one refusal counted" \
  || fail "refusals: $(printf '%s' "$out" | grep refusals_total)"
# Compute: a spinning worker at a 10 % cap waits for tokens.
$C run --sm 10 --state $CUDACAP_ROOT/sm -- $WORKER spin --us 2000 --seconds 4 >/dev/null 2>&1 & bgpids+=($!)
t=
for i in $(seq 60); do
  out=$($C metrics)
  v=$(printf '%s\n' "$out" | sed -n 's/^cudacap_throttled_seconds_total{cudacap_container="sm",[^}]*} //p')
  awk -v v="${v:-0}" 'BEGIN { exit !(v > 0.2) }' && t=$v && break
  sleep 0.1
done
[ -n "$t" ] && ok "throttled seconds counted ($t s)" || fail "throttled: '${v:-}'"
if need_tool promtool prometheus; then
  printf '%s\n' "$out" > $CLI_TEST_TMP/m.prom
  lint=$(promtool check metrics < $CLI_TEST_TMP/m.prom 2>&1); rc=$?
  [ $rc = 0 ] && ok "promtool check metrics: clean" || fail "promtool ($rc): $lint"
else
  echo "note: promtool not installed; exposition not linted"
fi
wait ${bgpids[-1]} 2>/dev/null
# The worker is gone: idle, not its last utilization.
expect 0 "status after the run" $C status
case "$out" in *"idle / 10.0%"*) ok "status says idle" ;; *) fail "not idle: $out" ;; esac
expect 0 "json" $C status --json
[ "$(jfield sm gpu idle)" = true ] && ok "json idle" || fail "json idle: $(jfield sm gpu idle)"
[ "$(jfield sm gpu sm_util_percent)" = null ] && ok "no stale utilization" || fail "util $(jfield sm gpu sm_util_percent)"
expect 0 "metrics idle" $C metrics
has "cudacap_sm_utilization_ratio{cudacap_container=\"sm\",gpu=\"0\",UUID=\"$U0\",Hostname=\"testnode\"} 0" "idle exports 0"
# gpu = NVML index: the rank of the device's PCI folder, not its minor number.
P=$CLI_TEST_TMP/nvproc
mkdir -p $P/0000:3b:00.0 $P/0000:1a:00.0
printf 'Device Minor:\t 5\nGPU UUID:\t GPU-other\n' > $P/0000:1a:00.0/information
printf 'Device Minor:\t 0\nGPU UUID:\t %s\n' $U0 > $P/0000:3b:00.0/information
expect 0 "metrics with a driver listing" env CUDACAP_NVIDIA_PROC=$P $C metrics
has "cudacap_fb_used_bytes{cudacap_container=\"mem\",gpu=\"1\",UUID=\"$U0\"" "gpu label is the NVML index (1), not minor 0"
# The HAMi layout: ROOT/<podUID>_<ctr>/<uuid>.cache.d; namespace and pod
# name from the kubelet's /var/log/pods/<ns>_<pod>_<uid> (CUDACAP_POD_LOGS).
uid=0f8e1c2a-1111-4222-8333-944455566677
LIB=$(readlink -f "$(dirname "$CUDACAP_BIN")/../lib")/libcudacap.so
mkdir -p $CUDACAP_ROOT/${uid}_train $CLI_TEST_TMP/pods/ml_trainer-0_$uid $CLI_TEST_TMP/pods/other_x_0f8e1c2a-0000-4222-8333-944455566677
env LD_PRELOAD=${SANPRE:+$SANPRE:}$LIB CUDA_DEVICE_MEMORY_LIMIT=1g \
  CUDA_DEVICE_MEMORY_SHARED_CACHE=$CUDACAP_ROOT/${uid}_train/$U0.cache \
  $WORKER hold --mib 16 --seconds 20 --ready $CLI_TEST_TMP/hami.ready >/dev/null 2>&1 & bgpids+=($!)
wait_for $CLI_TEST_TMP/hami.ready 20 || fail "HAMi-layout worker did not start"
expect 0 "metrics, HAMi layout" env CUDACAP_POD_LOGS=$CLI_TEST_TMP/pods $C metrics
has "cudacap_fb_limit_bytes{cudacap_container=\"${uid}_train\",pod_uid=\"$uid\",namespace=\"ml\",pod=\"trainer-0\",container=\"train\",gpu=\"0\",UUID=\"$U0\",Hostname=\"testnode\"} 1073741824" "pod labels from the folder and the kubelet's log folders"
expect 0 "metrics, no pod logs" env CUDACAP_POD_LOGS=$CLI_TEST_TMP/none $C metrics
has "pod_uid=\"$uid\",container=\"train\",gpu" "without them: uid and container only"
finish
