#!/usr/bin/env bash
# The limits file (docs/configuration.md, "The limits file"): written by
# `cudacap prepare DIR --mem SIZE --sm PCT`, the container's one source of
# caps; a process's own environment cannot raise them, and a bad file fails
# closed, naming the file and the field, without a hang.
#   config_limits.sh file   caps from the file, the environment ignored
#   config_limits.sh bad    corrupt, truncated, FIFO, symlink
#   config_limits.sh set    cudacap set's checks and what it prints (the
#                           change itself: config.live.*)
# From CTest: $PRELOAD, $WORKER, $CLI, $CONFIG_TEST_TMP, simulator env.
set -u
mode=${1:?mode}
. "$(dirname "$0")/config_lib.sh"
config_tmp "$mode"
G=$((1 << 30))
S=$T/root/c
export CUDACAP_STATE_DIR=$S
"$CLI" prepare "$S" --mem 1g --sm 30 >/dev/null || fail "prepare --mem 1g --sm 30"
[ -f "$S/limits" ] && ok "prepare writes the limits file" || fail "no $S/limits"

case $mode in
file)
  out=$("$CLI" prepare "$T/other" --sm 30 --sm-soft 20 2>&1); rc=$?
  [ "$rc" = 2 ] && ok "a soft limit below the SM cap is refused" || fail "soft below: rc $rc: $out"
  has "--sm-soft 20 is below the SM cap 30" "the flag is named"
  out=$("$CLI" prepare "$T/other" --mem-16 1g 2>&1); rc=$?
  [ "$rc" = 2 ] && ok "--mem-16 is refused" || fail "--mem-16: rc $rc: $out"
  m=$(stat -c %a "$S/limits")
  [ "$m" = 644 ] && ok "limits is 0644" || fail "limits mode $m"
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
  grep -qx "generation 2" "$S/limits" && grep -qx "mem 2147483648" "$S/limits" && ok "file rewritten" \
    || fail "file: $(cat "$S/limits")"
  [ "$(stat -c %a "$S/limits")" = 644 ] && ok "still 0644" || fail "mode $(stat -c %a "$S/limits")"
  out=$("$CLI" set "$S" --sm-1 40 --dry-run 2>&1); rc=$?
  has "device 1: SM cap 60% -> 40%" "dry run says the change"
  grep -q "^sm.1" "$S/limits" && fail "dry run wrote" || ok "dry run writes nothing"
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
  printf 'cudacap-limits 1\ngeneration 1\nmem lots\n' > "$S/limits"
  out=$("$CLI" set "$S" --mem 1g 2>&1); rc=$?
  [ "$rc" = 1 ] && ok "a bad file is left alone" || fail "bad file: rc $rc: $out"
  has "field mem" "the bad field is named"
  rm -f "$S/limits"
  out=$("$CLI" set "$S" --sm 50 2>&1); rc=$?
  [ "$rc" = 0 ] && grep -qx "sm 50" "$S/limits" && ok "no file: one is created" || fail "no file: rc $rc: $out"
  has "has no limits file: creating one" "says it creates one"
  ;;
bad)
  good=$(cat "$S/limits")
  check_bad() { # what, expected words
    w -- hold --mib 1 --seconds 0
    [ "$rc" != 0 ] && [ "$rc" != 124 ] && ok "$1: the GPU is refused" || fail "$1: rc $rc: $out"
    has "$S/limits" "$1: the file is named"
    has "$2" "$1: says why"
    out=$("$CLI" status "$T/root" 2>&1)
    has "config error" "$1: status says config error"
  }
  printf '%s\n' "$good" | sed 's/^mem .*/mem 9663676416/' > "$S/limits"
  check_bad "a raised cap, checksum not updated" "field checksum"
  printf '%s\n' "$good" | head -2 > "$S/limits"
  check_bad "truncated" "no checksum"
  printf 'cudacap-limits 1\ngeneration 1\nmem lots\n' > "$S/limits"
  check_bad "unparsable" "field mem"
  rm -f "$S/limits"; mkfifo "$S/limits"
  check_bad "a FIFO" "not a plain file"
  rm -f "$S/limits"; printf '%s\n' "$good" > "$T/elsewhere"; ln -s "$T/elsewhere" "$S/limits"
  check_bad "a symlink" "symbolic link"
  ;;
esac
finish
