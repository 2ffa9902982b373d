# Node-side polish: cudacap run's process group (SIGTERM reaches
# a shell's background workers), the memory region made at context
# creation (the cap shows before the first allocation), a state folder
# made with its parents by the library, and top's keys and width on a
# terminal (through script(1)'s pseudo-terminal; skipped without it).
. "$(dirname "$0")/cli_lib.sh"
C=$CUDACAP
T=$CLI_TEST_TMP
mkdir -p $CUDACAP_ROOT
LIB=$(readlink -f "$(dirname "$CUDACAP_BIN")/../lib")/libcudacap.so
export CUDACAP_SIM_CTX_MEM=64m

# 1. SIGTERM to cudacap run reaches the background workers of bash -c.
$C run -- bash -c "sleep 300 & echo \$! > $T/w1; sleep 300 & echo \$! > $T/w2; wait" & rp=$!; bgpids+=($rp)
wait_for $T/w2 10 && sleep 0.2
w1=$(cat $T/w1 2>/dev/null); w2=$(cat $T/w2 2>/dev/null)
kill -TERM $rp; wait $rp; rc=$?
[ $rc = 143 ] && ok "cudacap run died by the forwarded SIGTERM (143)" || fail "rc $rc"
gone=0
for i in $(seq 40); do
  kill -0 "$w1" 2>/dev/null || kill -0 "$w2" 2>/dev/null || { gone=1; break; }
  sleep 0.05
done
[ $gone = 1 ] && ok "both background workers got it" || { fail "workers $w1 $w2 still run"; kill -9 $w1 $w2 2>/dev/null; }
# (From /proc with shell builtins: ps under the sanitized preload hangs in ASan builds.)
expect 0 "CMD leads its own process group" $C run -- sh -c 'read -r l < /proc/$$/stat; set -- $l; echo "$1 $5"'
set -- $out
[ "${1:-x}" = "${2:-y}" ] && ok "pgid = pid" || fail "pid/pgid: $out"

# 2. The cap before the first allocation: a process holding only a context.
$C run --mem 1g --state $CUDACAP_ROOT/ctx -- $WORKER ctx --seconds 30 --ready $T/ctx.ready >/dev/null 2>&1 & bgpids+=($!)
wait_for $T/ctx.ready 20 || fail "ctx worker did not start"
expect 0 "status --json" $C status --json
[ "$(jfield ctx gpu memory_limit_bytes)" = 1073741824 ] && ok "cap shown before any allocation" \
  || fail "limit '$(jfield ctx gpu memory_limit_bytes)': $out"
[ "$(jfield ctx gpu memory_used_bytes)" = $((64 << 20)) ] && ok "the context's memory counts" \
  || fail "used '$(jfield ctx gpu memory_used_bytes)'"

# 3. A state folder whose parents do not exist: made by the library.
D=$T/deep/er/state
expect 0 "library run with a nested state folder" env LD_PRELOAD=${SANPRE:+$SANPRE:}$LIB CUDACAP_STATE_DIR=$D \
  CUDACAP_MEM_LIMIT=512m $WORKER alloc --chunk 64 --seconds 0
has "cuMemGetInfo total 0.50 GiB" "capped"
[ -f $D/memory.region ] && ok "folder and parents made, region inside" || fail "no $D/memory.region"
[ "$(stat -c %a $D)" = 700 ] && [ "$(stat -c %a $T/deep/er)" = 711 ] && ok "modes 0700 / parents 0711" \
  || fail "modes $(stat -c %a $D) $(stat -c %a $T/deep/er)"

# 3b. HAMi's CUDA_TASK_PRIORITY: ignored, said once. CUDA_OVERSUBSCRIBE is a
# switch now (docs/memory.md, "Oversubscription"): on a card larger than the
# cap it changes nothing and says nothing.
expect 0 "HAMi variables" env CUDACAP_LOG_LEVEL=1 CUDA_TASK_PRIORITY=1 CUDA_OVERSUBSCRIBE=true \
  $C run --mem 512m -- $WORKER alloc --chunk 64 --seconds 0
[ "$(printf '%s\n' "$out" | grep -c 'CUDA_TASK_PRIORITY="1" is ignored')" = 1 ] && ok "priority: one warning" || fail "priority warning: $out"
hasnt "CUDA_OVERSUBSCRIBE" "oversubscribe: a switch, no warning"
expect 0 "CUDA_OVERSUBSCRIBE=false" env CUDACAP_LOG_LEVEL=1 CUDA_OVERSUBSCRIBE=false $C run --mem 512m -- $WORKER alloc --chunk 64 --seconds 0
hasnt "is ignored" "no warning for false"

# 4. top on a terminal: q quits, s sorts, lines fit the width.
# script(1) (util-linux; bsdutils before Debian 13) for a pseudo-terminal.
if need_tool script bsdutils && script -qec true /dev/null >/dev/null 2>&1; then
  strip() { sed 's/\x1b\[[0-9;?]*[a-zA-Z]//g' "$1" | tr -d '\r'; }
  # Keys sent once top has drawn what the previous one should show (at most
  # 5 s each), not after fixed sleeps: a loaded machine started top late and
  # both keys were read before a frame showed the first.
  feed() {
    local f=$1 i; shift
    while [ $# -ge 2 ]; do
      for i in $(seq 100); do strip "$f" 2>/dev/null | grep -q "$1" && break; sleep 0.05; done
      printf %s "$2"; shift 2
    done
  }
  (feed $T/top.out '^cudacap top ' s 'sort: memory' q) | timeout 10 script -qec "stty cols 60 rows 30; $C top --interval 0.2" /dev/null > $T/top.out 2>&1
  rc=$?
  [ $rc = 0 ] && ok "q quits (exit 0, no timeout)" || fail "top rc $rc"
  strip $T/top.out | grep -q 'sort: memory' && ok "s cycles the sort" || fail "no sort change: $(strip $T/top.out | head -3)"
  w=$(strip $T/top.out | awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }')
  [ "$w" -le 60 ] && ok "lines cut to 60 columns (widest $w)" || fail "a line of $w columns"
  # Columns that adapt: at 60 the table drops SAMPLER, so PROCS still shows.
  strip $T/top.out | grep -qE '^CONTAINER +GPU +MEMORY USED / CAP +SM UTIL / CAP +PROCS' \
    && ok "narrow table keeps PROCS at 60 columns" || fail "header at 60: $(strip $T/top.out | grep -m1 '^CONTAINER')"
  (feed $T/top2.out '^cudacap top ' p PAUSED ''; sleep 0.8; printf q) | timeout 10 script -qec "$C top --interval 0.1" /dev/null > $T/top2.out 2>&1
  strip $T/top2.out | grep -q PAUSED && ok "p pauses" || fail "no pause"
  # run on a terminal: CMD's group gets the terminal (its tpgid is its pgrp).
  timeout 10 script -qec "$C run -- sh -c 'read -r l < /proc/\$\$/stat; set -- \$l; echo pg=\$5 fg=\$8'" /dev/null > $T/tty.out 2>&1
  l=$(strip $T/tty.out | grep 'pg=')
  case "$l" in pg=*) [ "${l%% *}" = "pg=${l##*fg=}" ] && ok "CMD's group has the terminal ($l)" || fail "terminal: $l" ;;
    *) fail "no output: $(cat $T/tty.out)" ;; esac
  n=$(strip $T/top2.out | grep -c '^cudacap top ')
  [ "$n" -le 8 ] && ok "no frames while paused ($n)" || fail "$n frames at 0.1 s with a pause of 0.8 s"
  # A terminal of 6 rows and more lines than that: 5 lines a frame, the
  # header first, the last saying how many were left out.
  for k in 1 2 3 4; do $C run --mem 256m --keep --name short$k -- $WORKER alloc --chunk 64 --seconds 0 >/dev/null 2>&1; done
  timeout 10 script -qec "stty cols 100 rows 6; $C top --iterations 1" /dev/null > $T/top3.out 2>&1
  lines=$(strip $T/top3.out | grep -v '^$')
  nl=$(printf '%s\n' "$lines" | wc -l)
  [ "$nl" -le 5 ] && ok "clipped to the terminal ($nl lines in 6 rows)" || fail "$nl lines in 6 rows: $lines"
  printf '%s\n' "$lines" | head -1 | grep -q '^cudacap top ' && ok "the header stays" || fail "header: $lines"
  printf '%s\n' "$lines" | tail -1 | grep -qE '^\.\.\. [0-9]+ more lines' && ok "says what was left out" \
    || fail "no 'more lines': $lines"
  printf '%s\n' "$lines" | grep -q '^GPU 0  mem ' && ok "a GPU line under the header" || fail "no GPU line: $lines"
else
  echo "note: no script(1) pseudo-terminal; top's keys not tested"
fi
finish
