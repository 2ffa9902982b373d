# cudacap metrics: exposition format, --output for the textfile collector,
# the --listen HTTP endpoint, label escaping, a missing ROOT.
. "$(dirname "$0")/cli_lib.sh"
C=$CUDACAP
export CUDACAP_SIM_CTX_MEM=64m
mkdir -p $CUDACAP_ROOT
$C run --mem 256m --state "$CUDACAP_ROOT/we\"ird\\name" -- $WORKER hold --mib 10 --seconds 30 \
  --ready $CLI_TEST_TMP/ready >/dev/null 2>&1 & bgpids+=($!)
wait_for $CLI_TEST_TMP/ready 20 || fail "worker did not start"
expect 0 "metrics" $C metrics
for m in build_info fb_used_bytes fb_limit_bytes sm_utilization_ratio gpu_utilization_ratio sm_limit_ratio \
         sample_age_seconds device_processes sampler_active processes process_fb_used_bytes region_ok; do
  has "# HELP cudacap_$m " "HELP $m"; has "# TYPE cudacap_$m gauge" "TYPE $m"
done
for m in mem_refusals_total throttled_seconds_total; do has "# TYPE cudacap_$m counter" "counter $m"; done
has 'cudacap_build_info{Hostname="testnode",version="' "build info"
hasnt 'percent' "no percent units"; hasnt '_pid{' "no pid as a value"
has 'cudacap_fb_used_bytes{cudacap_container="we\"ird\\name",gpu="0",UUID="GPU-5ac1ca00-0000-4000-8000-000000000000",Hostname="testnode"} 77594624' "escaped label, value"
# A folder whose name is not UTF-8 (bytes 0xff 0xfe): its label value has
# U+FFFD in their place, and promtool, which rejects such a byte (checked
# below on a line made for it: the check's own control), accepts the whole
# exposition; the JSON status parses as UTF-8.
bad=$(printf 'bad\377\376name')
expect 0 "run in a non-UTF-8 folder" $C run --mem 64m --keep --state "$CUDACAP_ROOT/$bad" -- $WORKER alloc --chunk 8 --seconds 0
expect 0 "metrics with it" $C metrics
has "cudacap_fb_limit_bytes{cudacap_container=\"bad$(printf '\357\277\275\357\277\275')name\"" "replaced by U+FFFD"
if need_tool promtool prometheus; then
  printf '%s\n' "$out" > $CLI_TEST_TMP/u.prom
  lint=$(promtool check metrics < $CLI_TEST_TMP/u.prom 2>&1) && ok "promtool accepts it" || fail "promtool: $lint"
  printf '# HELP x_y x\n# TYPE x_y gauge\nx_y{a="b\377c"} 1\n' > $CLI_TEST_TMP/raw.prom
  promtool check metrics < $CLI_TEST_TMP/raw.prom >/dev/null 2>&1 && fail "promtool took a raw 0xff: the check above proves nothing" \
    || ok "promtool rejects a raw 0xff (control)"
else
  echo "note: promtool not installed; exposition not linted"
fi
expect 0 "status --json" $C status --json
printf '%s' "$out" | python3 -c 'import json, sys; json.loads(sys.stdin.buffer.read().decode("utf-8"))' \
  && ok "JSON is UTF-8" || fail "JSON not UTF-8"
expect 0 "metrics again" $C metrics
# Every sample line: name{labels} number.
bad=$(printf '%s\n' "$out" | grep -v '^#' | grep -Ev '^[a-z_]+\{[^}]*\} [0-9.e+-]+$' || true)
[ -z "$bad" ] && ok "every sample line well formed" || fail "malformed: $bad"

expect 0 "--output" $C metrics --output $CLI_TEST_TMP/cudacap.prom
grep -q '^cudacap_fb_limit_bytes{.*} 268435456$' $CLI_TEST_TMP/cudacap.prom && ok "file written" || fail "file: $(cat $CLI_TEST_TMP/cudacap.prom)"
[ -z "$(ls $CLI_TEST_TMP | grep tmp)" ] && ok "no temporary left" || fail "left: $(ls $CLI_TEST_TMP)"
expect 1 "--output into a missing folder" $C metrics --output $CLI_TEST_TMP/no/such/f.prom; has "cannot write" "says why"

expect 0 "missing ROOT: empty exposition" $C metrics $CLI_TEST_TMP/nonexistent
hasnt "cudacap_container=" "no samples"

# HTTP: one request per connection, over bash's /dev/tcp.
get() { # port path
  exec 3<>/dev/tcp/127.0.0.1/$1 || return 1
  printf 'GET %s HTTP/1.0\r\nHost: x\r\n\r\n' "$2" >&3
  cat <&3; exec 3<&-
}
start_listener || fail "listener did not start: $(cat $CLI_TEST_TMP/listen.err)"
out=$(get $port /metrics); has "HTTP/1.0 200 OK" "HTTP 200"; has "text/plain; version=0.0.4" "content type"
has 'cudacap_fb_limit_bytes{cudacap_container="we\"ird\\name"' "body"
out=$(get $port /health); has "HTTP/1.0 200 OK" "/health 200"; has "OK" "/health body"
hasnt "cudacap_" "/health renders no exposition"
out=$(get $port /nope); has "HTTP/1.0 404" "404 elsewhere"
out=$(get $port /metrics); has "HTTP/1.0 200 OK" "still serving after a 404"
kill -TERM $lp; wait $lp; rc=$?
[ $rc = 0 ] && ok "stops on SIGTERM with 0" || fail "listener rc $rc"
finish
