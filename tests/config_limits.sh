#!/usr/bin/env bash
# The limits file (docs/configuration.md, "The limits file"): written by
# `cudacap prepare DIR --mem SIZE --sm PCT`, the container's one source of
# caps; a process's own environment cannot raise them, and a bad file fails
# closed, naming the file and the field, without a hang.
#   config_limits.sh file   caps from the file, the environment ignored
#   config_limits.sh bad    corrupt, truncated, FIFO, symlink
#   config_limits.sh set    cudacap set's checks and what it prints (the
#                           change itself: config.live.*)
#   config_limits.sh faults the fault campaign's cases for the file: each
#                           OS-layer call a capped start makes (open, fstat,
#                           mkdir, map, lock, /proc/1/environ), failed in
#                           turn (the first 12 calls of each point, which
#                           hold the file's read): the start ends with the
#                           file's cap, or refused naming the file, or says
#                           it degraded; never a silent run without the cap,
#                           never a hang (20 s each)
# From CTest: $PRELOAD, $WORKER, $CLI, $CONFIG_TEST_TMP, simulator env.
set -u
mode=${1:?mode}
. "$(dirname "$0")/config_lib.sh"
config_tmp "$mode"
G=$((1 << 30))
S=$T/root/c
export CUDACAP_STATE_DIR=$S
"$CLI" prepare "$S" --mem 1g --sm 30 >/dev/null || fail "prepare --mem 1g --sm 30"
[ -f "$S/limits.d/limits" ] && ok "prepare writes the limits file" || fail "no $S/limits.d/limits"

case $mode in
file)
  out=$("$CLI" prepare "$T/other" --sm 30 --sm-soft 20 2>&1); rc=$?
  [ "$rc" = 2 ] && ok "a soft limit below the SM cap is refused" || fail "soft below: rc $rc: $out"
  has "--sm-soft 20 is below the SM cap 30" "the flag is named"
  out=$("$CLI" prepare "$T/other" --mem-16 1g 2>&1); rc=$?
  [ "$rc" = 2 ] && ok "--mem-16 is refused" || fail "--mem-16: rc $rc: $out"
  m=$(stat -c %a "$S/limits.d/limits")
  [ "$m" = 644 ] && ok "limits is 0644" || fail "limits mode $m"
  m=$(stat -c %a "$S/limits.d")
  [ "$m" = 755 ] && ok "limits.d is 0755" || fail "limits.d mode $m"
  # A runtime may have limits.d mounted: prepare keeps the folder (its
  # inode), emptied and written again.
  i1=$(stat -c %i "$S/limits.d")
  "$CLI" prepare "$S" --mem 1g --sm 30 >/dev/null || fail "prepare again"
  [ "$(stat -c %i "$S/limits.d")" = "$i1" ] && ok "prepare keeps limits.d" || fail "limits.d replaced"
  "$CLI" prepare "$S" >/dev/null || fail "prepare without caps"
  [ -d "$S/limits.d" ] && [ ! -e "$S/limits.d/limits" ] && ok "prepare without caps empties limits.d" \
    || fail "limits.d after prepare without caps: $(ls -la "$S/limits.d" 2>&1)"
  "$CLI" prepare "$S" --mem 1g --sm 30 >/dev/null || fail "prepare once more"
  w CUDACAP_MEM_LIMIT=8g -- hold --mib 0 --seconds 0
  [ "$(total)" = $G ] && ok "env 8g is held to the file's 1 GiB" || fail "env 8g: $out"
  has 'CUDACAP_MEM_LIMIT="8g" is ignored' "the differing variable is said"
  w CUDA_DEVICE_MEMORY_LIMIT=8g CUDACAP_SM_LIMIT=90 -- hold --mib 0 --seconds 0
  [ "$(total)" = $G ] && ok "HAMi's 8g is held to 1 GiB" || fail "HAMi 8g: $out"
  has 'CUDACAP_SM_LIMIT="90" is ignored' "the SM variable is said"
  w -- hold --mib 0 --seconds 0
  [ "$(total)" = $G ] && ok "no cap env: held to 1 GiB" || fail "no env: $out"
  w -- hold --mib 1536 --seconds 0
  [ "$rc" != 0 ] && ok "1.5 GiB refused under the file's 1 GiB" || fail "1.5 GiB passed: $out"
  w CUDACAP_SM_LIMIT=90 -- spin --us 1000 --blocks 1 --seconds 0.2
  out=$("$CLI" status --json "$T/root" 2>&1)
  case "$out" in *'"sm_limit_percent":30'*) ok "the SM cap is the file's 30 %" ;;
    *) fail "SM cap: $out" ;; esac
  ;;
set)
  out=$("$CLI" set "$S" --mem 2g --sm 60 2>&1); rc=$?
  [ "$rc" = 0 ] && ok "set --mem 2g --sm 60" || fail "set: rc $rc: $out"
  has "every device: memory cap 1.00 GiB -> 2.00 GiB" "set says the memory change"
  has "every device: SM cap 30% -> 60%" "set says the SM change"
  has "generation 1 -> 2" "set says the generation"
  grep -qx "generation 2" "$S/limits.d/limits" && grep -qx "mem 2147483648" "$S/limits.d/limits" && ok "file rewritten" \
    || fail "file: $(cat "$S/limits.d/limits")"
  [ "$(stat -c %a "$S/limits.d/limits")" = 644 ] && ok "still 0644" || fail "mode $(stat -c %a "$S/limits.d/limits")"
  out=$("$CLI" set "$S" --sm-1 40 --dry-run 2>&1); rc=$?
  has "device 1: SM cap 60% -> 40%" "dry run says the change"
  grep -q "^sm.1" "$S/limits.d/limits" && fail "dry run wrote" || ok "dry run writes nothing"
  out=$("$CLI" set "$S" --sm 60 2>&1)
  has "nothing changed (generation 2)" "an unchanged value writes nothing"
  out=$("$CLI" set "$S" --sm-soft 20 2>&1); rc=$?
  [ "$rc" = 2 ] && ok "a soft limit below the cap is refused" || fail "soft 20: rc $rc: $out"
  has "--sm-soft 20 is below the SM cap 60" "the flag is named"
  out=$("$CLI" set "$S" --mem 0 2>&1); rc=$?
  [ "$rc" = 2 ] && ok "--mem 0 is refused" || fail "--mem 0: rc $rc: $out"
  out=$(CUDACAP_SIM_MEM=8g "$CLI" set "$S" --mem 9g 2>&1); rc=$?
  [ "$rc" = 2 ] && ok "a cap above every device is refused" || fail "--mem 9g: rc $rc: $out"
  has "--mem 9.00 GiB: larger than every device" "the device's size is named"
  out=$("$CLI" set "$S" 2>&1); rc=$?
  [ "$rc" = 2 ] && ok "no flag: usage error" || fail "no flag: rc $rc"
  printf 'cudacap-limits 1\ngeneration 1\nmem lots\n' > "$S/limits.d/limits"
  out=$("$CLI" set "$S" --mem 1g 2>&1); rc=$?
  [ "$rc" = 1 ] && ok "a bad file is left alone" || fail "bad file: rc $rc: $out"
  has "field mem" "the bad field is named"
  rm -f "$S/limits.d/limits"
  out=$("$CLI" set "$S" --sm 50 2>&1); rc=$?
  [ "$rc" = 0 ] && grep -qx "sm 50" "$S/limits.d/limits" && ok "no file: one is created" || fail "no file: rc $rc: $out"
  has "has no limits file: creating one" "says it creates one"
  ;;
faults)
  C=$T/census
  rm -f "$C"
  w CUDACAP_TEST_FAULT_COUNT="$C" -- hold --mib 0 --seconds 0
  [ "$(total)" = $G ] && ok "census run held to 1 GiB" || fail "census: $out"
  cases=0
  for p in open fstat mkdir map lock proc_environ; do
    c=$(awk -v p=$p '$1 == p {s += $2} END {print s + 0}' "$C")
    [ "$c" -gt 12 ] && c=12
    for n in $(seq 1 "$c"); do
      cases=$((cases + 1))
      w CUDACAP_TEST_FAULT=$p:$n -- hold --mib 0 --seconds 0
      if [ "$rc" = 124 ]; then fail "$p:$n: hang"; continue; fi
      if [ "$rc" = 0 ] && [ "$(total)" = $G ]; then continue; fi
      case "$out" in
        *"limits file $S/limits.d/limits"*) ;;        # refused, naming the file
        *"cudacap["*"]: warning"*|*"cudacap["*"]: error"*) ;;  # degraded, said
        *) fail "$p:$n: rc $rc, cap lost silently: $out" ;;
      esac
    done
  done
  [ "$cases" -gt 10 ] && ok "$cases fault cases" || fail "only $cases fault cases: $(cat "$C")"
  ;;
bad)
  good=$(cat "$S/limits.d/limits")
  check_bad() { # what, expected words
    w -- hold --mib 1 --seconds 0
    [ "$rc" != 0 ] && [ "$rc" != 124 ] && ok "$1: the GPU is refused" || fail "$1: rc $rc: $out"
    has "$S/limits.d/limits" "$1: the file is named"
    has "$2" "$1: says why"
    out=$("$CLI" status "$T/root" 2>&1)
    has "config error" "$1: status says config error"
  }
  printf '%s\n' "$good" | sed 's/^mem .*/mem 9663676416/' > "$S/limits.d/limits"
  check_bad "a raised cap, checksum not updated" "field checksum"
  printf '%s\n' "$good" | head -2 > "$S/limits.d/limits"
  check_bad "truncated" "no checksum"
  printf 'cudacap-limits 1\ngeneration 1\nmem lots\n' > "$S/limits.d/limits"
  check_bad "unparsable" "field mem"
  rm -f "$S/limits.d/limits"; mkfifo "$S/limits.d/limits"
  check_bad "a FIFO" "not a plain file"
  rm -f "$S/limits.d/limits"; printf '%s\n' "$good" > "$T/elsewhere"; ln -s "$T/elsewhere" "$S/limits.d/limits"
  check_bad "a symlink" "symbolic link"
  # The folder itself: a link to a folder holding a good file, a file.
  rm -rf "$S/limits.d"; mkdir -p "$T/ld"; printf '%s\n' "$good" > "$T/ld/limits"; chmod 644 "$T/ld/limits"
  ln -s "$T/ld" "$S/limits.d"
  check_bad "limits.d a symlink" "limits.d is a symbolic link"
  rm -f "$S/limits.d"; printf '%s\n' "$good" > "$S/limits.d"
  check_bad "limits.d a file" "limits.d is not a folder"
  ;;
esac
finish
