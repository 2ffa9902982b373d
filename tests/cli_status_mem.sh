# cudacap status and metrics report the right memory figures for processes
# started by cudacap run: per process what it allocated plus its context
# (the simulator's CUDACAP_SIM_CTX_MEM, 64 MiB here: the truth comes from the
# simulator's contract, not from cudacap), per container the sum, the cap.
. "$(dirname "$0")/cli_lib.sh"
C=$CUDACAP
export CUDACAP_SIM_CTX_MEM=64m CUDACAP_SIM_MEM=8g
M=$((1 << 20))
start() { # container cap mib tag
  $C run --mem $2 --state $CUDACAP_ROOT/$1 -- $WORKER hold --mib $3 --seconds 30 \
    --ready $CLI_TEST_TMP/ready.$4 >$CLI_TEST_TMP/out.$4 2>&1 & bgpids+=($!)
  wait_for $CLI_TEST_TMP/ready.$4 20 || fail "worker $4 did not start: $(cat $CLI_TEST_TMP/out.$4)"
}
mkdir -p $CUDACAP_ROOT
start c1 1g 100 a
start c1 1g 200 b
start c2 512m 50 c
pa=$(worker_pid $CLI_TEST_TMP/out.a); pb=$(worker_pid $CLI_TEST_TMP/out.b); pc=$(worker_pid $CLI_TEST_TMP/out.c)

expect 0 "status --json" $C status --json
hpa=$(jfield c1 pid host_pid $pa)
[ "$(jfield c1 gpu memory_used_bytes)" = $(((100 + 64 + 200 + 64) * M)) ] && ok "c1 used = sum of its processes" \
  || fail "c1 used $(jfield c1 gpu memory_used_bytes)"
[ "$(jfield c1 gpu memory_limit_bytes)" = $((1024 * M)) ] && ok "c1 cap" || fail "c1 cap $(jfield c1 gpu memory_limit_bytes)"
[ "$(jfield c1 gpu processes)" = 2 ] && ok "c1 two processes" || fail "c1 processes $(jfield c1 gpu processes)"
[ "$(jfield c1 pid memory_bytes $pa)" = $(((100 + 64) * M)) ] && ok "process a" || fail "process a: $(jfield c1 pid memory_bytes $pa)"
[ "$(jfield c1 pid memory_bytes $pb)" = $(((200 + 64) * M)) ] && ok "process b" || fail "process b: $(jfield c1 pid memory_bytes $pb)"
[ "$(jfield c1 pid alive $pa)" = true ] && ok "a alive" || fail "a not alive"
[ "$(jfield c2 gpu memory_used_bytes)" = $(((50 + 64) * M)) ] && ok "c2 used" || fail "c2 used $(jfield c2 gpu memory_used_bytes)"
[ "$(jfield c2 gpu memory_limit_bytes)" = $((512 * M)) ] && ok "c2 cap" || fail "c2 cap"
[ -z "$(jfield c2 pid memory_bytes $pa)" ] && ok "a is not in c2" || fail "a listed in c2"

expect 0 "status table" $C status
has "428 MiB / 1.00 GiB" "c1 line"
has "pid $pa" "lists a"
# Its command name, read by its host pid (the simulator's NVML names the
# real pid, which the library learns at its context's creation).
[ "$hpa" = "$pa" ] && ok "a's host pid known ($hpa)" || fail "a's host pid: '$hpa'"
printf '%s\n' "$out" | grep -q "^  pid $pa cudacap_demo_wo " && ok "process name (comm)" \
  || fail "no name: $(printf '%s\n' "$out" | grep "pid $pa")"

# The library each container's processes loaded (src/cli/proclib.c): its
# path as the process maps it and the version tag read from the file.
ver=$($C --version | awk '{print $2}')
printf '%s\n' "$out" | grep -Eq "^  library /.*/libcudacap\.so[.0-9]*, version $ver \(2 processes\)$" \
  && ok "c1's library and version ($ver)" || fail "no library line: $(printf '%s\n' "$out" | grep library)"
expect 0 "status --json" $C status --json
printf '%s\n' "$out" | grep "{\"pid\":$pa," | grep -Eq "\"library\":\{\"path\":\"/[^\"]*libcudacap\.so[.0-9]*\",\"version\":\"$ver\"\}" \
  && ok "a's library in JSON" || fail "a's library: $(printf '%s\n' "$out" | grep "{\"pid\":$pa,")"

expect 0 "metrics" $C metrics
U='UUID="GPU-5ac1ca00-0000-4000-8000-000000000000"'
has "cudacap_fb_used_bytes{cudacap_container=\"c1\",gpu=\"0\",$U,Hostname=\"testnode\"} $(((428) * M))" "c1 fb_used"
has "cudacap_fb_limit_bytes{cudacap_container=\"c1\",gpu=\"0\",$U,Hostname=\"testnode\"} $((1024 * M))" "c1 fb_limit"
has "cudacap_fb_used_bytes{cudacap_container=\"c2\",gpu=\"0\",$U,Hostname=\"testnode\"} $((114 * M))" "c2 fb_used"
has "cudacap_process_fb_used_bytes{cudacap_container=\"c1\",gpu=\"0\",$U,Hostname=\"testnode\",pid=\"$pb\"} $((264 * M))" "b per process"
has 'cudacap_processes{cudacap_container="c1",Hostname="testnode"} 2' "c1 processes"
has 'cudacap_region_ok{cudacap_container="c1",Hostname="testnode",region="memory"} 1' "region ok"
# c1 has a memory cap only: no compute region, so no region_ok sample for it
# (a 0 there fired every naive alert on memory-only containers).
hasnt 'cudacap_region_ok{cudacap_container="c1",Hostname="testnode",region="compute"}' "absent region: no sample"
finish
