#!/usr/bin/env bash
# The seed system's (vgpu-manager's) names give the caps cudacap's own names
# give, their device index follows MANAGER_VISIBLE_DEVICES, and a bad value
# is never silent: `cudacap status` says "config error", metrics count it,
# and CUDACAP_STRICT=1 refuses the GPU.
#   config_seed.sh seed     the seed's names
#   config_seed.sh strict   bad values, fail open and strict
# From CTest: $PRELOAD, $WORKER, $CLI, $CONFIG_TEST_TMP, simulator env.
set -u
mode=${1:?mode}
. "$(dirname "$0")/config_lib.sh"
config_tmp "$mode"

G=$((1 << 30))
U0=GPU-5ac1ca00-0000-4000-8000-000000000000

case $mode in
seed)
  export CUDACAP_STATE_DIR=$T/state
  for pair in "CUDACAP_MEM_LIMIT CUDA_MEM_LIMIT" "CUDACAP_MEM_LIMIT_0 CUDA_MEM_LIMIT_0"; do
    set -- $pair
    w "$1=1g" -- hold --mib 0 --seconds 0; a=$(total)
    w "$2=1g" -- hold --mib 0 --seconds 0; b=$(total)
    [ "$a" = $G ] && [ "$b" = $G ] && ok "$2 caps as $1 does" || fail "$2: $b, $1: $a"
  done
  # The SM cap: the container's share as its compute region records it.
  w CUDA_CORE_LIMIT_0=30 -- spin --us 1000 --blocks 1 --seconds 0.2
  out=$("$CLI" status --json "$T" 2>&1)
  case "$out" in *'"sm_limit_percent":30'*) ok "CUDA_CORE_LIMIT_0=30: a 30 % cap" ;;
    *) fail "CUDA_CORE_LIMIT_0=30: $out" ;; esac
  # Both names, different values: cudacap's wins, said as for HAMi's names.
  w CUDACAP_MEM_LIMIT=2g CUDA_MEM_LIMIT=1g -- hold --mib 0 --seconds 0
  [ "$(total)" = $((2 * G)) ] && ok "CUDACAP_MEM_LIMIT wins" || fail "conflict: $out"
  has 'CUDA_MEM_LIMIT="1g" differs from CUDACAP_MEM_LIMIT="2g"' "the conflict is said"
  # <i> is the device's place in MANAGER_VISIBLE_DEVICES.
  w MANAGER_VISIBLE_DEVICES="GPU-aaaaaaaa-0000-4000-8000-000000000000,$U0" CUDA_VISIBLE_DEVICES=$U0 \
    CUDA_MEM_LIMIT_0=3g CUDA_MEM_LIMIT_1=1g -- hold --mib 0 --seconds 0
  [ "$(total)" = $G ] && ok "place 1 in MANAGER_VISIBLE_DEVICES is ordinal 0" || fail "place: $out"
  w CUDA_MEM_LIMIT_16=1g -- hold --mib 0 --seconds 0
  has 'CUDA_MEM_LIMIT_16="1g"' "a seed name out of range is said"
  ;;
strict)
  # Fail open: the process runs with the cap absent, and the node sees it.
  export CUDACAP_STATE_DIR=$T/open/c
  w CUDACAP_MEM_LIMIT=lots CUDACAP_SM_LIMIT=30 -- hold --mib 1 --seconds 0
  [ "$rc" = 0 ] && ok "a bad value runs open" || fail "fail open: rc $rc: $out"
  out=$("$CLI" status "$T/open" 2>&1)
  has "config error" "status says config error"
  out=$("$CLI" metrics "$T/open" 2>&1)
  printf '%s\n' "$out" | grep -q '^cudacap_config_errors_total{.*} 1$' &&
    ok "metrics count it" || fail "metrics: $out"
  # Strict: the GPU is refused, said, and counted as refused.
  export CUDACAP_STATE_DIR=$T/strict/c
  w CUDACAP_STRICT=1 CUDACAP_MEM_LIMIT=lots -- hold --mib 1 --seconds 0
  [ "$rc" != 0 ] && ok "strict: the worker fails" || fail "strict ran: $out"
  has "CUDACAP_STRICT=1" "strict: said"
  has "failed: 800" "strict: cuInit gives CUDA_ERROR_NOT_PERMITTED"
  out=$("$CLI" status --json "$T/strict" 2>&1)
  case "$out" in *'"config_refused":1'*) ok "status counts the refusal" ;; *) fail "refusal: $out" ;; esac
  # A good configuration under strict runs.
  export CUDACAP_STATE_DIR=$T/good/c
  w CUDACAP_STRICT=1 CUDACAP_MEM_LIMIT=1g -- hold --mib 1 --seconds 0
  [ "$rc" = 0 ] && ok "strict with a good value runs" || fail "strict good: $out"
  ;;
esac
finish
