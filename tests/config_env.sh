#!/usr/bin/env bash
# The configuration through the real library, preloaded into the demo worker
# on the simulator: exact sizes, every ignored
# name reported, a real switch for CUDACAP_COUNT_CALLS, an unusable state
# path giving per-process caps (never the shared default folder), control
# bytes escaped. From CTest: $PRELOAD, $WORKER, $CONFIG_TEST_TMP, simulator env.
set -u
. "$(dirname "$0")/config_lib.sh"
T=$CONFIG_TEST_TMP
rm -rf "$T" && mkdir -p "$T"
export CUDACAP_STATE_DIR=$T/state CUDACAP_SIM_MEM=8g CUDACAP_LOG_LEVEL=1
unset CUDACAP_COUNT_CALLS

cclines() { printf '%s\n' "$out" | grep -c '^cudacap\['; }

# --- item 13: sizes are exact --------------------------------------------
for c in "0.5000000000000t 549755813888" "1.50000000t 1649267441664" "0.99999999t 1099511616780" \
         "0.000000000001t 1" "1.5GiB 1610612736"; do
  set -- $c
  w CUDACAP_SIM_MEM=4t CUDACAP_MEM_LIMIT=$1 -- hold --mib 0 --seconds 0
  [ "$rc" = 0 ] && [ "$(total)" = "$2" ] && ok "size $1 is $2 bytes" || fail "size $1: rc $rc, want $2: $out"
done
w CUDACAP_MEM_LIMIT=16777216t -- hold --mib 0 --seconds 0
has 'CUDACAP_MEM_LIMIT="16777216t" is larger than the largest size' "2^64 bytes reported"
[ "$(total)" = $((8 << 30)) ] && ok "2^64 bytes: no cap" || fail "2^64 bytes: $out"

# --- item 14: per-device names out of range -------------------------------
for n in CUDACAP_MEM_LIMIT_99 CUDACAP_MEM_LIMIT_16 CUDA_DEVICE_MEMORY_LIMIT_00 CUDACAP_SM_LIMIT_-1 \
         CUDA_DEVICE_SM_LIMIT_16; do
  w "$n=1" -- hold --mib 0 --seconds 0
  has "$n=\"1\"" "$n named"
  has "0..15" "$n: the valid range"
done
w CUDACAP_MEM_LIMIT_99=1g -- hold --mib 2048 --seconds 0
[ "$rc" = 0 ] && [ "$(total)" = $((8 << 30)) ] && ok "_99 caps no device" || fail "_99: $out"

# --- HAMi's policy, in any case -------------------------------------------
for p in Disable force DEFAULT; do
  w CUDACAP_SM_LIMIT=50 GPU_CORE_UTILIZATION_POLICY=$p -- hold --mib 0 --seconds 0
  [ "$rc" = 0 ] && [ "$(cclines)" = 0 ] && ok "policy $p accepted" || fail "policy $p: $out"
done
w CUDACAP_SM_LIMIT=50 GPU_CORE_UTILIZATION_POLICY=sometimes -- hold --mib 0 --seconds 0
has 'GPU_CORE_UTILIZATION_POLICY="sometimes" is not one of default, force, disable' "policy garbage"

# --- CUDACAP_COUNT_CALLS is a switch --------------------------------------
for v in 0 false no off OFF; do
  w CUDACAP_COUNT_CALLS=$v -- hold --mib 1 --seconds 0
  hasnt ": calls " "COUNT_CALLS=$v counts nothing"
  [ "$(cclines)" = 0 ] || fail "COUNT_CALLS=$v: $out"
done
for v in 1 true yes ON; do
  w CUDACAP_COUNT_CALLS=$v -- hold --mib 1 --seconds 0
  has ": calls cuMemAlloc" "COUNT_CALLS=$v counts"
done
w CUDACAP_COUNT_CALLS=maybe -- hold --mib 1 --seconds 0
has 'CUDACAP_COUNT_CALLS="maybe" is not a switch' "COUNT_CALLS garbage reported"
hasnt ": calls " "COUNT_CALLS garbage counts nothing"

# --- a state path too long: per-process caps, one message -----------------
long=/$(printf 'a%.0s' $(seq 600))
# The old fallback was the default folder: memory.region, compute.region,
# sampling.lock and identity.lock all landed there. When it is absent before
# a run, it must be absent after it (checked run by run, so that the window
# in which something else on the machine could make it stays short).
wl() {
  local before=0
  [ -e /tmp/cudacap ] && before=1
  w "$@"
  [ "$before" = 0 ] && [ -e /tmp/cudacap ] && fail "long path: /tmp/cudacap was made: $(ls -A /tmp/cudacap)"
  return 0
}
for kv in "CUDACAP_STATE_DIR=$long" "CUDA_DEVICE_MEMORY_SHARED_CACHE=$long"; do
  name=${kv%%=*}
  e=()
  [ "$name" = CUDACAP_STATE_DIR ] || e=(-u CUDACAP_STATE_DIR) # env: options first
  e+=("$kv" CUDACAP_MEM_LIMIT=1g CUDACAP_SM_LIMIT=50)
  # Memory, the compute region, the sampling lock and the identity lock all
  # want the folder: one message in all, naming the variable.
  wl "${e[@]}" -- spin --us 1000 --blocks 132 --seconds 0.3
  [ "$rc" = 0 ] && ok "$name long: runs" || fail "$name long: rc $rc: $out"
  has "$name=\"/aaaa" "$name long: named"
  [ "$(cclines)" = 1 ] && ok "$name long: one message" || fail "$name long: $(cclines) messages: $out"
  # The cap holds, per process ...
  wl "${e[@]}" -- hold --mib 1100 --seconds 0
  [ "$rc" = 1 ] && ok "$name long: 1100 MiB refused under 1g" || fail "$name long: 1100 MiB: rc $rc: $out"
  # ... and is not shared: two processes of 700 MiB each both get theirs
  # (in one shared folder, such as the default, the second would be refused).
  rm -f "$T/ready"
  env "${e[@]}" LD_PRELOAD="$PRELOAD" "$WORKER" hold --mib 700 --seconds 3 --ready "$T/ready" \
    >"$T/first" 2>&1 &
  first=$!
  for _ in $(seq 200); do [ -e "$T/ready" ] && break; sleep 0.05; done
  wl "${e[@]}" -- hold --mib 700 --seconds 0
  [ "$rc" = 0 ] && ok "$name long: a second process gets its own 700 MiB" \
                || fail "$name long: second process: rc $rc: $out"
  wait "$first" || fail "$name long: first process: $(cat "$T/first")"
done

# --- control bytes are escaped, never echoed raw --------------------------
esc=$(printf '\033')
w CUDACAP_MEM_LIMIT="${esc}[31mlots" -- hold --mib 0 --seconds 0
has 'CUDACAP_MEM_LIMIT="\x1b[31mlots"' "ESC shown as \\x1b"
hasnt "$esc" "no raw ESC"
w CUDACAP_LOG_LEVEL="${esc}]0;owned" -- hold --mib 0 --seconds 0
has 'CUDACAP_LOG_LEVEL="\x1b]0;owned"' "log level: ESC shown as \\x1b"
hasnt "$esc" "log level: no raw ESC"

# --- the HAMi log level name: ours wins, a difference is said --------------
w CUDACAP_LOG_LEVEL=1 LIBCUDA_LOG_LEVEL=3 -- hold --mib 0 --seconds 0
has 'LIBCUDA_LOG_LEVEL="3" differs from CUDACAP_LOG_LEVEL="1"' "log level names differ"
hasnt "info:" "log level: CUDACAP_LOG_LEVEL wins"
# (HAMi's name alone is read; a bad level is said and the default kept; the
# difference is said at the new level, so not at 0.)
w -u CUDACAP_LOG_LEVEL LIBCUDA_LOG_LEVEL=3 -- hold --mib 0 --seconds 0
has "info:" "log level: LIBCUDA_LOG_LEVEL alone is read"
w CUDACAP_LOG_LEVEL=5 -- hold --mib 0 --seconds 0
has 'CUDACAP_LOG_LEVEL="5" is not a log level 0..4; using 1' "log level: bad level said"
w CUDACAP_LOG_LEVEL=0 LIBCUDA_LOG_LEVEL=3 -- hold --mib 0 --seconds 0
[ "$(cclines)" = 0 ] && ok "log level 0: nothing said" || fail "log level 0: $out"

[ "$fails" = 0 ] && echo "all passed" && exit 0
echo "$fails failure(s)" >&2
exit 1
