# The compute side of status/metrics for a container started by cudacap
# run: its SM cap, a published utilization sample, and the sampling owner
# (a process of that container, found through its lock).
. "$(dirname "$0")/cli_lib.sh"
C=$CUDACAP
mkdir -p $CUDACAP_ROOT
$C run --sm 40 --state $CUDACAP_ROOT/s -- bash -c \
  "$WORKER spin --us 1000 --seconds 8 & $WORKER spin --us 1000 --seconds 8 & wait" >/dev/null 2>&1 &
bgpids+=($!)
got=
for i in $(seq 60); do
  out=$($C status --json 2>&1)
  # A number, not "null": the owner holds its lock a cycle before its first
  # sample (a watcher's first poll covers nothing yet).
  case "$(jfield s gpu sample_age_ms)" in [0-9]*) ;; *) sleep 0.1; continue ;; esac
  [ "$(jfield s gpu sampling_owner)" = '"held"' ] && got=1 && break
  sleep 0.1
done
[ -n "$got" ] && ok "a sample and an owner within 6 s" || fail "no sample/owner: $out"
[ "$(jfield s gpu sm_limit_percent)" = 40.0 ] && ok "SM cap 40" || fail "cap $(jfield s gpu sm_limit_percent)"
u=$(jfield s gpu sm_util_percent)
awk -v u="$u" 'BEGIN { exit !(u >= 0 && u <= 100) }' && ok "utilization $u in 0..100" || fail "utilization '$u'"
owner=$(jfield s gpu sampling_owner_pid)
grep -q cudacap_demo_worker /proc/$owner/cmdline 2>/dev/null && ok "owner $owner is a worker" || fail "owner '$owner'"
case "$out" in *"{\"pid\":$owner,"*) ok "owner is one of the container's processes" ;; *) fail "owner not listed" ;; esac
# Per-process utilization, published by the sampler in the
# compute region: each worker has a figure; together they are the device's.
# (Retried: under load the second worker's host pid, hence its figure, can
# come a few sampling periods after the owner's.)
pu=
for i in $(seq 50); do
  out=$($C status --json 2>&1)
  pu=$(jfield s pid sm_util_percent $owner)
  nw=$(printf '%s\n' "$out" | grep -c '"sm_util_percent":[0-9]' )
  [ -n "$pu" ] && [ "$pu" != null ] && [ "$nw" -ge 3 ] && break
  sleep 0.1
done
awk -v u="$pu" 'BEGIN { exit !(u != "" && u != "null" && u >= 0 && u <= 100) }' \
  && ok "owner's own utilization $pu" || fail "owner's utilization '$pu': $out"
[ "$nw" -ge 3 ] && ok "device + 2 workers have a utilization ($nw)" || fail "only $nw utilizations: $out"
case "$out" in *'"sampling_owner_host_pid":'[0-9]*) ok "owner host pid published" ;; *) fail "no owner host pid: $out" ;; esac
U='cudacap_container="s",gpu="0",UUID="GPU-5ac1ca00-0000-4000-8000-000000000000",Hostname="testnode"'
expect_until 6 "cudacap_sampler_active{$U} 1" "metrics" $C metrics
has "cudacap_sm_limit_ratio{$U} 0.4" "sm_limit metric (a ratio)"
has "cudacap_sampler_active{$U} 1" "sampler metric (no pid as a value)"
has "cudacap_sm_utilization_ratio{cudacap_container=\"s\"" "util metric"
has "cudacap_process_sm_utilization_ratio{$U,pid=\"$owner\"}" "per-process util metric"
expect_until 6 "[samples gpu0]" "table" $C status
has "pid $owner" "owner in the table"
has "/ 40.0%" "cap in the table"
has "sm gpu0 " "per-process utilization in the table"
has "[samples gpu0]" "the owner marked in the process list"
finish
