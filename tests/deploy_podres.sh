# The DaemonSet's pod-resources wiring: the exporter is given the
# kubelet's socket and the folder holding it is mounted read-only from the
# host; tests/deploy_check.py refuses a manifest whose --pod-resources or
# --root path lies in no mounted volume (two mutated copies must fail).
. "$(dirname "$0")/cli_lib.sh"
T=$CLI_TEST_TMP
SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
need_py yaml python3-yaml || { echo "SKIP: no python3 with yaml (python3-yaml)"; exit 77; }
expect 0 "deploy_check" $PY $SRCDIR/tests/deploy_check.py $SRCDIR
out=$($PY - $SRCDIR/deploy/daemonset.yaml <<'PYEOF'
import sys, yaml
ds = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d.get("kind") == "DaemonSet"][0]
ps = ds["spec"]["template"]["spec"]
ex = [c for c in ps["containers"] if c["name"] == "exporter"][0]
a = ex["args"]
print("arg", a[a.index("--pod-resources") + 1])
for m in ex["volumeMounts"]:
    if m["name"] == "pod-resources": print("mount", m["mountPath"], "ro" if m.get("readOnly") else "rw")
for v in ps["volumes"]:
    if v["name"] == "pod-resources": print("volume", v["hostPath"]["path"], v["hostPath"].get("type"))
PYEOF
)
has "arg /var/lib/kubelet/pod-resources/kubelet.sock" "exporter given the kubelet's socket"
has "mount /var/lib/kubelet/pod-resources ro" "its folder mounted read-only"
has "volume /var/lib/kubelet/pod-resources Directory" "from the host's folder"
for mut in 's|mountPath: /var/lib/kubelet/pod-resources|mountPath: /var/lib/kubelet/podresources|' \
           's|"--root", "/var/lib/cudacap/containers"|"--root", "/var/lib/cudacap/other"|'; do
  rm -rf $T/mut && mkdir -p $T/mut && cp -r $SRCDIR/deploy $T/mut/ && sed -i "$mut" $T/mut/deploy/daemonset.yaml
  cmp -s $SRCDIR/deploy/daemonset.yaml $T/mut/deploy/daemonset.yaml && fail "mutation '$mut' changed nothing"
  out=$($PY $SRCDIR/tests/deploy_check.py $T/mut 2>&1); rc=$?
  [ $rc = 1 ] && ok "mutation '$mut' caught: $(printf '%s' "$out" | head -1)" || fail "mutation '$mut' passed: $out"
done
finish
