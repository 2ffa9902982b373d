# A real Prometheus server (Debian's prometheus package) scrapes
# `cudacap metrics --listen` while the state root holds a folder whose name
# is not UTF-8 and one with a quote and a backslash: the target must be up
# and the query API must return the caps with U+FFFD in the label. Before
# 2026-12-02 one such folder took the whole scrape down ("invalid UTF-8
# label value"); the check's own control is a server giving Prometheus that
# raw byte, which must read down with that error, so that "up" above is
# Prometheus's verdict on our exposition and not a scrape that never ran.
# Skipped without prometheus (failing under CUDACAP_REQUIRE_TOOLS=1).
. "$(dirname "$0")/cli_lib.sh"
need_tool prometheus prometheus || { echo "skip: no prometheus server"; exit 77; }
C=$CUDACAP T=$CLI_TEST_TMP
export CUDACAP_SIM_CTX_MEM=64m
mkdir -p "$CUDACAP_ROOT"
bad=$(printf 'bad\377\376name')
expect 0 "a container in a non-UTF-8 folder" $C run --mem 64m --keep --state "$CUDACAP_ROOT/$bad" -- \
  $WORKER alloc --chunk 8 --seconds 0
expect 0 "a container in a folder with a quote and a backslash" $C run --mem 96m --keep \
  --state "$CUDACAP_ROOT/we\"ird\\name" -- $WORKER alloc --chunk 8 --seconds 0
start_listener || fail "listener did not start: $(cat $T/listen.err)"

# The control's target: a one-line exposition with a raw 0xff in a label.
printf '# HELP x_y x\n# TYPE x_y gauge\nx_y{a="b\377c"} 1\n' > $T/raw.prom
cport=$((20000 + RANDOM % 20000))
python3 - "$cport" "$T/raw.prom" <<'EOF' 2>$T/raw.err & bgpids+=($!)
import http.server, sys
body = open(sys.argv[2], "rb").read()
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
EOF

cat > $T/prometheus.yml <<EOF
global: {scrape_interval: 1s, scrape_timeout: 900ms}
scrape_configs:
  - job_name: cudacap
    static_configs: [{targets: ["127.0.0.1:$port"]}]
  - job_name: control
    static_configs: [{targets: ["127.0.0.1:$cport"]}]
EOF
for try in 1 2 3; do
  pport=$((20000 + RANDOM % 20000))
  prometheus --config.file=$T/prometheus.yml --storage.tsdb.path=$T/tsdb \
    --web.listen-address=127.0.0.1:$pport > $T/prometheus.log 2>&1 & pp=$!; bgpids+=($pp)
  sleep 1; kill -0 $pp 2>/dev/null && break
done
kill -0 $pp 2>/dev/null || { fail "prometheus did not start: $(tail -5 $T/prometheus.log)"; finish; }

# Until both targets have been scraped twice (at most 30 s): then the
# targets' health and errors, and the query.
out=$(python3 - "$pport" <<'EOF'
import json, sys, time, urllib.parse, urllib.request
base = "http://127.0.0.1:%s/api/v1/" % sys.argv[1]
def get(path):
    with urllib.request.urlopen(base + path, timeout=5) as r:
        return json.loads(r.read().decode("utf-8"))
seen, end = {}, time.time() + 30
while time.time() < end:
    try:
        ts = get("targets")["data"]["activeTargets"]
    except Exception:
        time.sleep(0.5); continue
    for t in ts:
        if t.get("lastScrape", "").startswith("0001"): continue
        seen.setdefault(t["labels"]["job"], set()).add(t["lastScrape"])
        last = t
    if len(seen) == 2 and all(len(v) >= 2 for v in seen.values()): break
    time.sleep(0.5)
for t in ts:
    print("target %s health %s error %s" % (t["labels"]["job"], t["health"], t.get("lastError") or "-"))
q = get("query?query=" + urllib.parse.quote("cudacap_fb_limit_bytes"))
for r in q["data"]["result"]:
    print("sample container=%s value=%s" % (r["metric"].get("cudacap_container"), r["value"][1]))
EOF
)
echo "$out"
has "target cudacap health up error -" "Prometheus scraped the exporter: up"
has "sample container=bad$(printf '\357\277\275\357\277\275')name value=67108864" \
  "the non-UTF-8 folder's cap, U+FFFD in its label, queried back"
has 'sample container=we"ird\name value=100663296' "the quote and backslash round-trip"
has "target control health down" "control: the raw 0xff target is down"
has "invalid UTF-8 label value" "control: for the reason an unescaped folder name gave"
finish
