# Shared by the cli_*.sh suites: $CUDACAP (the binary under test), $WORKER
# (cudacap_demo_worker), $CLI_TEST_TMP (a private scratch folder), the
# simulator environment (LD_LIBRARY_PATH, CUDACAP_SIM_DIR) from CTest.
set -u
fails=0
rm -rf "$CLI_TEST_TMP" && mkdir -p "$CLI_TEST_TMP"
export CUDACAP_ROOT=$CLI_TEST_TMP/root
export CUDACAP_LOG_LEVEL=${CUDACAP_LOG_LEVEL:-0}
export NODE_NAME=testnode # the exporter's Hostname label
# Sanitizer builds: the runtime must come first in a program that preloads
# the sanitized library; cudacap run keeps a runtime found in LD_PRELOAD
# first. Only cudacap gets it (other tools of the scripts run plain).
SANPRE=${CLI_TEST_SAN_PRELOAD:-}
CUDACAP_BIN=$CUDACAP
[ -n "$SANPRE" ] && CUDACAP="env LD_PRELOAD=$SANPRE $CUDACAP"
bgpids=()
# Descendants first: a worker left alive under a killed `cudacap run` keeps
# its folder live, and the next run in it is (rightly) refused.
kill_tree() { local c; for c in $(pgrep -P "$1" 2>/dev/null); do kill_tree "$c"; done; kill -9 "$1" 2>/dev/null; }
cleanup_bg() { for p in "${bgpids[@]}"; do kill_tree "$p"; done; wait 2>/dev/null; }
trap cleanup_bg EXIT

fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
finish() { [ "$fails" = 0 ] && echo "all passed" && exit 0; echo "$fails failure(s)" >&2; exit 1; }

# expect RC DESC CMD...: runs CMD, checks its exit status; output in $out.
expect() {
  local want=$1 desc=$2; shift 2
  out=$("$@" 2>&1); local rc=$?
  if [ "$rc" = "$want" ]; then ok "$desc (exit $rc)"; else fail "$desc: exit $rc, want $want: $out"; fi
}
# expect_until SECS TEXT DESC CMD...: as expect 0, CMD run again every
# 0.1 s (up to SECS) until it exits 0 with TEXT in its output. For what a
# live sampler publishes: beside a CI run its watcher thread was held up
# past the CLI's staleness bound for a moment, and one read missed it
# (2026-12-05). $out is the last output; has TEXT then judges it.
expect_until() {
  local secs=$1 text=$2 desc=$3 rc end; shift 3; end=$((SECONDS + secs))
  while :; do
    out=$("$@" 2>&1); rc=$?
    [ "$rc" = 0 ] && case "$out" in *"$text"*) break ;; esac
    [ $SECONDS -ge $end ] && break
    sleep 0.1
  done
  if [ "$rc" = 0 ]; then ok "$desc (exit 0)"; else fail "$desc: exit $rc, want 0: $out"; fi
}
# has TEXT DESC: $out contains TEXT
has() { case "$out" in *"$1"*) ok "$2" ;; *) fail "$2: no \"$1\" in: $out" ;; esac; }
hasnt() { case "$out" in *"$1"*) fail "$2: \"$1\" in: $out" ;; *) ok "$2" ;; esac; }

# need_tool COMMAND PACKAGE / need_py MODULES PACKAGES: an optional tool a
# check needs. Present: 0. Absent: 1 (the caller skips that check, saying
# so), unless CUDACAP_REQUIRE_TOOLS=1 (.ci/run sets it where it installed
# them as root): then the test fails at once, naming the Debian package, so
# a CI machine that lost a tool cannot pass by skipping. need_py sets $PY.
need_tool() {
  command -v "$1" >/dev/null 2>&1 && return 0
  [ "${CUDACAP_REQUIRE_TOOLS:-0}" = 1 ] || return 1
  echo "FAIL: $1 is missing (Debian package $2) and CUDACAP_REQUIRE_TOOLS=1" >&2; exit 1
}
need_py() {
  local p; PY=
  for p in python3 /usr/bin/python3; do "$p" -c "import $1" 2>/dev/null && PY=$p && return 0; done
  [ "${CUDACAP_REQUIRE_TOOLS:-0}" = 1 ] || return 1
  echo "FAIL: no python3 with $1 (Debian packages $2) and CUDACAP_REQUIRE_TOOLS=1" >&2; exit 1
}

# readme_packages: the packages of README.md's "On Debian: `apt-get install
# ...`" line, comma-separated (debootstrap's --include), for the fresh root
# README's commands run in (readme_fresh.sh) and the node image's build
# stage, which is that same root (deploy_image.sh).
readme_packages() {
  tr '\n' ' ' < "$(dirname "${BASH_SOURCE[0]}")/../README.md" |
    sed -n 's/.*On Debian: `apt-get install \([^`]*\)`.*/\1/p' | tr -s ' ' ',' | sed 's/,$//'
}

# wait_for FILE [SECONDS]: until FILE exists.
wait_for() {
  local i; for ((i = 0; i < ${2:-10} * 20; i++)); do [ -e "$1" ] && return 0; sleep 0.05; done
  return 1
}
# json_num KEY: first numeric value of "KEY": in $out (status --json).
json_num() { printf '%s' "$out" | grep -o "\"$1\":[0-9.]*" | head -1 | cut -d: -f2; }
# jfield CONTAINER KIND KEY [PID]: from status --json in $out, the value of
# KEY on the CONTAINER's first device line (KIND=gpu) or on the process line
# of PID (KIND=pid).
jfield() {
  printf '%s\n' "$out" | awk -v c="$1" -v kind="$2" -v key="$3" -v pid="${4:-}" '
    /^ \{"name":/ { cur = $0; sub(/^ \{"name":"/, "", cur); sub(/".*/, "", cur); next }
    cur != c { next }
    kind == "gpu" && /^  \{"gpu":/ { line = $0 }
    kind == "pid" && index($0, "{\"pid\":" pid ",") { line = $0 }
    line != "" { if (match(line, "\"" key "\":[^,}]*")) print substr(line, RSTART + length(key) + 3, RLENGTH - length(key) - 3); exit }'
}
# start_holder DIR: a capped worker (the library preloaded directly, no
# cudacap run) holding 1 MiB in state folder DIR for 30 s, ready; its pid in
# $holder (also in bgpids).
start_holder() {
  mkdir -p "$1"
  local lib=$(dirname "$CUDACAP_BIN")/../lib/libcudacap.so
  rm -f $CLI_TEST_TMP/ready
  LD_PRELOAD=${CLI_TEST_SAN_PRELOAD:+$CLI_TEST_SAN_PRELOAD:}$lib CUDACAP_STATE_DIR=$1 CUDACAP_MEM_LIMIT=1g \
    $WORKER hold --mib 1 --seconds 30 --ready $CLI_TEST_TMP/ready >/dev/null & bgpids+=($!)
  holder=$!
  wait_for $CLI_TEST_TMP/ready || fail "worker did not start"
}
# worker_pid FILE: the pid a worker printed ("pid N: ...").
worker_pid() { sed -n 's/^pid \([0-9]*\):.*/\1/p' "$1" | head -1; }
# start_listener [CMD]: CMD (default $CUDACAP) metrics --listen on a free
# port; sets $port and $lp (its pid, also in bgpids), stderr in listen.err.
start_listener() {
  local c=${1:-$CUDACAP} try i
  for try in 1 2 3 4 5; do
    port=$((20000 + RANDOM % 20000))
    : >$CLI_TEST_TMP/listen.err # not by the background redirection: it may come after the first grep
    $c metrics --listen 127.0.0.1:$port 2>$CLI_TEST_TMP/listen.err & lp=$!; bgpids+=($lp)
    for i in $(seq 50); do grep -q serving $CLI_TEST_TMP/listen.err && break; kill -0 $lp 2>/dev/null || break; sleep 0.1; done
    kill -0 $lp 2>/dev/null && return 0
  done
  return 1
}
