# Sourced by the configuration tests (config_env.sh, config_seed.sh,
# config_limits.sh): their checks and the demo worker under cudacap.
# Needs $PRELOAD and $WORKER; counts failures in $fails.
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
# w ENV... -- ARGS: the worker under cudacap (at most 20 s: a hang is a
# failure); output (both streams) in $out, exit status in $rc.
w() {
  local e=()
  while [ "$1" != -- ]; do e+=("$1"); shift; done
  shift
  out=$(env "${e[@]}" LD_PRELOAD="$PRELOAD" timeout 20 "$WORKER" "$@" 2>&1); rc=$?
}
has() { case "$out" in *"$1"*) ok "$2" ;; *) fail "$2: no \"$1\" in: $out" ;; esac; }
hasnt() { case "$out" in *"$1"*) fail "$2: \"$1\" in: $out" ;; *) ok "$2" ;; esac; }
# The container's cap as cuMemGetInfo reports it ("... of TOTAL").
total() { printf '%s\n' "$out" | sed -n 's/.* of \([0-9]*\)$/\1/p' | head -1; }
# The end of a test: its verdict.
finish() { [ "$fails" = 0 ] && echo "all passed" || { echo "$fails failed"; exit 1; }; }
# config_tmp SUB: a fresh folder $T for this test, the simulator's state in
# it, 8 GiB devices, no cap from the caller's environment.
config_tmp() {
  T=$CONFIG_TEST_TMP/$1
  rm -rf "$T" && mkdir -p "$T"
  export CUDACAP_SIM_MEM=8g CUDACAP_LOG_LEVEL=1 CUDACAP_SIM_DIR=$T/sim
  unset CUDACAP_COUNT_CALLS CUDACAP_MEM_LIMIT CUDACAP_SM_LIMIT CUDACAP_STRICT
}
