#!/usr/bin/env bash
# A process without the container's environment (an exec'd shell, an SSH
# session, a preload from /etc/ld.so.preload) finds the state folder and the
# caps through the container's init process (/proc/1/environ): in a pid
# namespace whose init has the container's variables, a child started with
# them removed is capped. Needs root (unshare); skipped (77) otherwise.
# From CTest: $PRELOAD, $WORKER, $CLI, $CONFIG_TEST_TMP, simulator env.
set -u
. "$(dirname "$0")/config_lib.sh"
config_tmp initenv
if ! { [ "$(id -u)" = 0 ] && unshare --pid --fork --mount-proc true 2>/dev/null; }; then
  # CI installs its tools as root (CUDACAP_REQUIRE_TOOLS=1): there a skip would hide a lost test.
  [ "${CUDACAP_REQUIRE_TOOLS:-0}" = 1 ] && { echo "FAIL: needs root and unshare (util-linux), and CUDACAP_REQUIRE_TOOLS=1"; exit 1; }
  echo "SKIP: needs root and unshare"; exit 77
fi
G=$((1 << 30))
# ns INIT_ENV... -- ARGS: the worker as a child of the namespace's init (a
# shell, pid 1, with INIT_ENV), without INIT_ENV's names in its own.
ns() {
  local e=() u=()
  while [ "$1" != -- ]; do e+=("$1"); u+=(-u "${1%%=*}"); shift; done
  shift
  out=$(env "${e[@]}" unshare --pid --fork --mount-proc sh -c \
        'env "$@"; true' sh "${u[@]}" LD_PRELOAD="$PRELOAD" CUDACAP_LOG_LEVEL=2 timeout 20 "$WORKER" "$@" 2>&1); rc=$?
}
unset CUDACAP_STATE_DIR
# The cap itself from the init's environment.
ns CUDACAP_STATE_DIR="$T/a" CUDACAP_MEM_LIMIT=1g -- hold --mib 0 --seconds 0
[ "$(total)" = $G ] && ok "the init's CUDACAP_MEM_LIMIT caps the child" || fail "init env cap: $out"
has "taken from the container's init process" "where the cap came from is said"
# The state folder from the init's environment, and so its limits file.
"$CLI" prepare "$T/b" --mem 1g >/dev/null || fail "prepare"
ns CUDACAP_STATE_DIR="$T/b" -- hold --mib 0 --seconds 0
[ "$(total)" = $G ] && ok "the init's state folder gives the limits file's cap" || fail "init folder: $out"
has "caps from the limits file $T/b/limits.d/limits" "the limits file is named"
finish
