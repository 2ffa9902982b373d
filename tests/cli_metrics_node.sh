# The exporter's node view: per-device totals over the containers (the sum
# of memory caps and SM caps, the containers counted, NVML's device memory
# and the overcommit of it), and folders of containers long gone left out
# (--stale-after).
. "$(dirname "$0")/cli_lib.sh"
C=$CUDACAP
export CUDACAP_SIM_MEM=8g
mkdir -p $CUDACAP_ROOT
U0=GPU-5ac1ca00-0000-4000-8000-000000000000
D="gpu=\"0\",UUID=\"$U0\",Hostname=\"testnode\""
# Each runs a few kernels: its compute region (and memory region) exist.
expect 0 "a 6 GiB, 30 % container" $C run --mem 6g --sm 30 --keep --name a -- $WORKER spin --us 200 --seconds 0.2
expect 0 "a 4 GiB, 50 % one" $C run --mem 4g --sm 50 --keep --name b -- $WORKER spin --us 200 --seconds 0.2
expect 0 "a 2 GiB, 40 % one" $C run --mem 2g --sm 40 --keep --name c -- $WORKER spin --us 200 --seconds 0.2
expect 0 "metrics" $C metrics
m() { printf '%s\n' "$out" | sed -n "s/^$1{$D} //p"; }
[ "$(m cudacap_gpu_containers)" = 3 ] && ok "3 containers on the device" || fail "containers: '$(m cudacap_gpu_containers)'"
[ "$(m cudacap_gpu_fb_limit_sum_bytes)" = $((12 << 30)) ] && ok "memory caps sum to 12 GiB" \
  || fail "fb sum: '$(m cudacap_gpu_fb_limit_sum_bytes)'"
[ "$(m cudacap_gpu_sm_limit_sum_ratio)" = 1.2 ] && ok "SM caps sum to 1.2" || fail "sm sum: '$(m cudacap_gpu_sm_limit_sum_ratio)'"
[ "$(m cudacap_gpu_fb_total_bytes)" = $((8 << 30)) ] && ok "device memory from NVML: 8 GiB" \
  || fail "total: '$(m cudacap_gpu_fb_total_bytes)'"
[ "$(m cudacap_gpu_fb_overcommit_ratio)" = 1.5 ] && ok "overcommit 1.5" || fail "overcommit: '$(m cudacap_gpu_fb_overcommit_ratio)'"
# Without NVML (an exporter pod without NVIDIA's libraries): no total, no
# ratio, the sums still there.
out=$(env LD_LIBRARY_PATH=/nonexistent $C metrics 2>&1)
[ -z "$(m cudacap_gpu_fb_total_bytes)" ] && [ -z "$(m cudacap_gpu_fb_overcommit_ratio)" ] && ok "no NVML: no total" \
  || fail "no NVML: total '$(m cudacap_gpu_fb_total_bytes)'"
[ "$(m cudacap_gpu_fb_limit_sum_bytes)" = $((12 << 30)) ] && ok "no NVML: sums still" || fail "no NVML sums: $out"

# Stale: a kept folder last written 2 hours ago, no live process.
old=$(date -d '2 hours ago' '+%Y%m%d%H%M.%S')
for f in $CUDACAP_ROOT/c $CUDACAP_ROOT/c/*; do touch -h -t $old "$f"; done
expect 0 "metrics" $C metrics
hasnt 'cudacap_container="c"' "a 2 h old folder without processes is left out"
has 'cudacap_container="a"' "fresh ones stay"
[ "$(m cudacap_gpu_containers)" = 2 ] && ok "and out of the totals" || fail "containers: '$(m cudacap_gpu_containers)'"
expect 0 "--stale-after 0" $C metrics --stale-after 0
has 'cudacap_container="c"' "--stale-after 0 keeps it"
expect 0 "--stale-after 86400" $C metrics --stale-after 86400
has 'cudacap_container="c"' "younger than the bound: kept"
# A live process keeps even an old folder.
$C run --mem 2g --sm 40 --state $CUDACAP_ROOT/c -- $WORKER hold --mib 1 --seconds 30 --ready $CLI_TEST_TMP/ready \
  >/dev/null 2>&1 & bgpids+=($!)
wait_for $CLI_TEST_TMP/ready 20 || fail "worker did not start"
for f in $CUDACAP_ROOT/c $CUDACAP_ROOT/c/*; do touch -h -t $old "$f"; done
expect 0 "metrics" $C metrics
has 'cudacap_container="c"' "an old folder with a live process stays"
expect 2 "--stale-after -1" $C metrics --stale-after -1
has "stale-after" "names the flag"
finish
