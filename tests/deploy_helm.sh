# The Helm chart (deploy/helm/cudacap), without Helm (not a Debian package):
# tests/helm_render.go renders it with Helm's engine (text/template, Sprig,
# yaml.v2, from Debian's Go packages). Checked: Chart.yaml and the rendered
# documents against a subset of helm lint's rules, rendering strictly (a
# misspelled .Values reference fails); the default rendering is
# deploy/daemonset.yaml byte for byte; it passes tests/deploy_check.py; an
# override file (namespace, image, node selection, HAMi off, kubelet folder)
# lands where it should; NOTES.txt renders. Mutated copies of the chart must
# fail. DEPLOY_HELM_CONTROL=1 (deploy.helm.negative_control, WILL_FAIL): a
# misspelled field in the DaemonSet's template, the expected manifest
# rendered from the same copy, so only the schema check can catch it.
# CUDACAP_HELM_UPDATE=1 rewrites deploy/daemonset.yaml from the chart.
. "$(dirname "$0")/cli_lib.sh"
T=$CLI_TEST_TMP
SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
GOCODE=/usr/share/gocode/src
need_tool go golang-go || { echo "SKIP: no go (golang-go)"; exit 77; }
for d in github.com/Masterminds/sprig gopkg.in/yaml.v2; do
  [ -d $GOCODE/$d ] && continue
  [ "${CUDACAP_REQUIRE_TOOLS:-0}" = 1 ] && { echo "FAIL: no $GOCODE/$d and CUDACAP_REQUIRE_TOOLS=1" >&2; exit 1; }
  echo "SKIP: no $GOCODE/$d (golang-github-masterminds-sprig-dev, golang-gopkg-yaml.v2-dev)"; exit 77
done
need_py yaml python3-yaml || { echo "SKIP: no python3 with yaml (python3-yaml)"; exit 77; }

# The renderer, built in GOPATH mode from Debian's sources: no module
# proxy is reachable. Debian installs Sprig and semver without their /v3
# suffix, so links give the import paths the code uses. GOPATH in the
# test's folder, the Go cache (safe to share) in the build folder.
G=$T/go
GOCACHE_DIR=$(dirname "$CLI_TEST_TMP")/../helm-go-cache
mkdir -p $G/src/helmrender $G/src/github.com/Masterminds/sprig $G/src/github.com/Masterminds/semver
ln -sfn $GOCODE/github.com/Masterminds/sprig $G/src/github.com/Masterminds/sprig/v3
ln -sfn $GOCODE/github.com/Masterminds/semver $G/src/github.com/Masterminds/semver/v3
cp $SRCDIR/tests/helm_render.go $G/src/helmrender/main.go
(cd $G && env GO111MODULE=off GOPATH=$G:/usr/share/gocode GOCACHE=$GOCACHE_DIR GOFLAGS= \
   go build -o $G/helm_render helmrender) || { echo "FAIL: go build of tests/helm_render.go" >&2; exit 1; }
R=$G/helm_render

CHART=$T/chart/cudacap
mkdir -p $T/chart && cp -r $SRCDIR/deploy/helm/cudacap $T/chart/
# deploy/daemonset.yaml: a comment header, then the rendering.
header() { sed '/^---$/,$d' "$1"; }
EXPECTED=$SRCDIR/deploy/daemonset.yaml
if [ "${DEPLOY_HELM_CONTROL:-0}" = 1 ]; then
  sed -i 's/^      hostPID: true/      hostPid: true/' $CHART/templates/daemonset.yaml
  cmp -s $SRCDIR/deploy/helm/cudacap/templates/daemonset.yaml $CHART/templates/daemonset.yaml &&
    { echo "control: the mutation changed nothing"; exit 0; }
  { header $EXPECTED; $R --name cudacap --strict $CHART; } > $T/expected.yaml
  EXPECTED=$T/expected.yaml
fi
if [ "${CUDACAP_HELM_UPDATE:-0}" = 1 ]; then
  { header $EXPECTED; $R --name cudacap --strict $CHART; } > $T/new.yaml && mv $T/new.yaml $EXPECTED &&
    echo "rewrote $EXPECTED"
fi

expect 0 "lint subset" $R --lint $CHART
has "0 problem(s)" "Chart.yaml and every rendered document pass"
# Strict rendering (missingkey=error) of the defaults, as the manifest.
expect 0 "render the defaults strictly" $R --name cudacap --strict $CHART
{ header $EXPECTED; printf '%s\n' "$out"; } > $T/rendered.yaml
if cmp -s $EXPECTED $T/rendered.yaml; then ok "deploy/daemonset.yaml is the chart's default rendering"
else fail "deploy/daemonset.yaml differs from the chart's rendering (CUDACAP_HELM_UPDATE=1 rewrites it):
$(diff $EXPECTED $T/rendered.yaml | head -20)"; fi
# Helm's lenient default (missingkey=zero) renders the same.
expect 0 "render the defaults" $R --name cudacap $CHART
[ "$out" = "$(sed '1,/^---$/{/^---$/!d}' $T/rendered.yaml)" ] && ok "lenient rendering the same" ||
  fail "lenient rendering differs"
# The schema check on the rendering, beside the Dockerfile it checks against.
mkdir -p $T/check/deploy && cp $SRCDIR/deploy/Dockerfile $SRCDIR/deploy/node-install.sh $T/check/deploy/
cp $T/rendered.yaml $T/check/deploy/rendered.yaml
expect 0 "deploy_check on the rendering" $PY $SRCDIR/tests/deploy_check.py $T/check
expect 0 "NOTES.txt renders" $R --name cudacap --notes $CHART
has "rollout status daemonset/cudacap-node" "NOTES names the DaemonSet"

# An override: another namespace, image, node selection, no HAMi, another
# kubelet folder; a null removes a default (tolerations), as in Helm.
cat > $T/override.yaml <<'EOF'
namespace: {name: gpu-system}
image: {repository: registry.example.org/gpu/cudacap-node, tag: "0.1.0-rc1", pullPolicy: Always}
hami: {dir: ""}
nodeSelectorTerms:
  - matchExpressions:
      - {key: gpu, operator: In, values: ["on"]}
nodeSelector: {node-pool: gpu-a}
tolerations: null
kubeletDir: /var/lib/k0s/kubelet
exporter: {port: 9478, nvidiaVisibleDevices: ""}
runtimeClassName: nvidia
EOF
expect 0 "render with an override" $R --name cap --namespace kube-system -f $T/override.yaml $CHART
printf '%s\n' "$out" > $T/override-out.yaml
out=$($PY - $T/override-out.yaml <<'PYEOF' 2>&1
import sys, yaml
docs = {d["kind"]: d for d in yaml.safe_load_all(open(sys.argv[1])) if d}
ns, cm, ds = docs.get("Namespace"), docs["ConfigMap"], docs["DaemonSet"]
print("namespace", ns["metadata"]["name"], ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"])
print("in", cm["metadata"]["namespace"], ds["metadata"]["namespace"])
ps = ds["spec"]["template"]["spec"]
cs = ps["initContainers"] + ps["containers"]
print("images", sorted(set(c["image"] for c in cs)), sorted(set(c.get("imagePullPolicy") for c in cs)))
print("terms", ps["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"])
print("nodeSelector", ps.get("nodeSelector"), "tolerations", ps.get("tolerations"))
print("HAMI_DIR", repr(cm["data"]["HAMI_DIR"]))
print("volumes", sorted(v["name"] for v in ps["volumes"]))
ex = [c for c in cs if c["name"] == "exporter"][0]
print("args", " ".join(ex["args"]))
print("port", ex["ports"][0]["containerPort"], ex["livenessProbe"]["httpGet"]["port"],
      ds["spec"]["template"]["metadata"]["annotations"]["prometheus.io/port"])
print("podres", [v["hostPath"]["path"] for v in ps["volumes"] if v["name"] == "pod-resources"])
print("runtimeClassName", ps.get("runtimeClassName"), "exporter env", [e["name"] for e in ex["env"]])
PYEOF
)
has "namespace gpu-system privileged" "the namespace made, labelled privileged"
has "in gpu-system gpu-system" "everything in it"
has "images ['registry.example.org/gpu/cudacap-node:0.1.0-rc1'] ['Always']" "image and pull policy on all three containers"
has "terms [{'matchExpressions': [{'key': 'gpu', 'operator': 'In', 'values': ['on']}]}]" "the node selector terms replaced"
has "nodeSelector {'node-pool': 'gpu-a'} tolerations None" "nodeSelector added; tolerations removed by null"
has "HAMI_DIR ''" "HAMi off in the ConfigMap"
has "volumes ['host-lib', 'nvidia-proc', 'pod-logs', 'pod-resources', 'state']" "HAMi's folders not mounted"
has "--listen :9478 --pod-resources /var/lib/k0s/kubelet/pod-resources/kubelet.sock" "exporter's port and socket"
has "port 9478 9478 9478" "port, probe and annotation agree"
has "podres ['/var/lib/k0s/kubelet/pod-resources']" "kubelet folder mounted"
has "runtimeClassName nvidia exporter env ['NODE_NAME', 'CUDACAP_NVIDIA_PROC']" \
  "a RuntimeClass set; NVML not asked for: no NVIDIA_* in the exporter's env"
# The defaults ask the NVIDIA runtime for NVML (utility) on every device.
grep -A1 'name: NVIDIA_VISIBLE_DEVICES' $T/rendered.yaml | grep -q 'value: "all"' &&
  grep -A1 'name: NVIDIA_DRIVER_CAPABILITIES' $T/rendered.yaml | grep -q 'value: utility' &&
  ok "the default exporter asks for NVML" || fail "the default exporter does not ask for NVML"
grep -q runtimeClassName $T/rendered.yaml && fail "a RuntimeClass by default" || ok "no RuntimeClass by default"
# namespace.name "": the release's namespace; create false: no Namespace.
printf 'namespace: {name: "", create: false}\n' > $T/override2.yaml
expect 0 "render into the release's namespace" $R --name cap --namespace gpu-ops --strict -f $T/override2.yaml $CHART
hasnt "kind: Namespace" "no Namespace object"
[ "$(printf '%s\n' "$out" | grep -c '^  namespace: gpu-ops$')" = 2 ] && ok "ConfigMap and DaemonSet in the release's namespace" ||
  fail "not in gpu-ops: $(printf '%s\n' "$out" | grep namespace:)"
# The override's rendering beside the Dockerfile: the schema check's rules
# still hold except its node selection rule (each GPU label alone in a
# term), which this override drops on purpose.
rm -f $T/check/deploy/rendered.yaml && cp $T/override-out.yaml $T/check/deploy/rendered.yaml
out=$($PY $SRCDIR/tests/deploy_check.py $T/check 2>&1)
[ "$(printf '%s\n' "$out" | grep -vc 'no node selector term for .* alone$\|problem(s)')" = 0 ] &&
  ok "override's rendering: only the node selection rule reported" || fail "override's rendering: $out"

# Mutated copies of the chart: each must fail to render strictly, to lint,
# to match the manifest, or the schema check.
if [ "${DEPLOY_HELM_CONTROL:-0}" != 1 ]; then
  for mut in 'daemonset.yaml:s/\.Values\.exporter\.port }}/.Values.exporter.prot }}/' \
             'daemonset.yaml:s/readOnlyRootFilesystem: true/readOnlyRootFilesystem: false/' \
             'daemonset.yaml:s/^      hostPID: true/      hostPid: true/' \
             '_helpers.tpl:s/trimSuffix "-"/trimSuffix "-" | upper/' \
             'namespace.yaml:s/enforce: privileged/enforce: baseline/' \
             'configmap.yaml:s/HAMI_VERSION: /HAMI_VERSON: /'; do
    f=${mut%%:*}
    rm -rf $T/mut && mkdir -p $T/mut && cp -r $SRCDIR/deploy/helm/cudacap $T/mut/ && sed -i "${mut#*:}" $T/mut/cudacap/templates/$f
    cmp -s $SRCDIR/deploy/helm/cudacap/templates/$f $T/mut/cudacap/templates/$f && fail "mutation '$mut' changed nothing"
    why=
    if ! $R --lint $T/mut/cudacap >$T/mut.out 2>&1; then why="lint: $(head -1 $T/mut.out)"
    else
      $R --name cudacap --strict $T/mut/cudacap > $T/mut.yaml
      mkdir -p $T/mut/check/deploy && cp $T/check/deploy/Dockerfile $T/check/deploy/node-install.sh $T/mut/check/deploy/
      cp $T/mut.yaml $T/mut/check/deploy/rendered.yaml
      $PY $SRCDIR/tests/deploy_check.py $T/mut/check > $T/mut.out 2>&1 || why="deploy_check: $(head -1 $T/mut.out)"
      [ "$(sed '1,/^---$/{/^---$/!d}' $EXPECTED)" = "$(cat $T/mut.yaml)" ] || why="${why:+$why; }differs from deploy/daemonset.yaml"
    fi
    [ -n "$why" ] && ok "mutation '$mut' caught ($why)" || fail "mutation '$mut' passed"
  done
fi
finish
