#!/usr/bin/env python3
"""Schema check of the node installer's manifests (deploy/), runnable
without a cluster: kubeconform and helm are not Debian packages, so this is
a hand-written subset of the Kubernetes API schema for what the manifests
use. Every mapping key is checked against the fields the API defines
(catching typos a YAML parser accepts), required fields, types, references
(volume mounts to volumes, probe ports to container ports, selector to
template labels), hostPath types, quantities, the paths the exporter's
--root and --pod-resources name lying in a volume mounted into it, and the
Dockerfile's COPY sources and the paths the manifest runs. Exit 1 with one
line per problem."""
import os, re, sys
import yaml

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
problems = []
def bad(where, msg): problems.append(f"{where}: {msg}")

DNS1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
QTY = re.compile(r"^[0-9]+(\.[0-9]+)?(m|k|M|G|T|Ki|Mi|Gi|Ti)?$")
FIELDS = {
    "meta": {"name", "namespace", "labels", "annotations"},
    "ds.spec": {"selector", "template", "updateStrategy", "minReadySeconds", "revisionHistoryLimit"},
    "pod.spec": {"hostPID", "hostNetwork", "nodeSelector", "tolerations", "initContainers", "containers",
                 "volumes", "serviceAccountName", "priorityClassName", "securityContext", "affinity",
                 "terminationGracePeriodSeconds", "runtimeClassName"},
    "container": {"name", "image", "command", "args", "env", "ports", "volumeMounts", "resources",
                  "securityContext", "readinessProbe", "livenessProbe", "imagePullPolicy", "workingDir"},
    "toleration": {"key", "operator", "value", "effect", "tolerationSeconds"},
    "env": {"name", "value", "valueFrom"},
    "port": {"name", "containerPort", "protocol", "hostPort"},
    "mount": {"name", "mountPath", "readOnly", "subPath", "mountPropagation"},
    "volume": {"name", "hostPath", "emptyDir", "configMap", "secret"},
    "hostPath": {"path", "type"},
    "probe": {"httpGet", "exec", "tcpSocket", "periodSeconds", "initialDelaySeconds", "timeoutSeconds",
              "failureThreshold"},
    "resources": {"requests", "limits"},
    "valueFrom": {"configMapKeyRef", "fieldRef", "secretKeyRef", "resourceFieldRef"},
    "keyRef": {"name", "key", "optional"},
    "affinity": {"nodeAffinity", "podAffinity", "podAntiAffinity"},
    "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution",
                     "preferredDuringSchedulingIgnoredDuringExecution"},
    "nodeSelector": {"nodeSelectorTerms"},
    "term": {"matchExpressions", "matchFields"},
    "expr": {"key", "operator", "values"},
}
# GPU nodes: GPU feature discovery's label, and HAMi's guide's.
GPU_NODE_LABELS = {("nvidia.com/gpu.present", "true"), ("gpu", "on")}
configmaps = {}  # (namespace, name) -> data
namespaces = {}  # name -> labels
key_refs = []    # (where, name, key)
literal_settings = []  # env entries giving HAMI_* literally
NODE_SETTINGS = {"HAMI_DIR", "HAMI_VERSION"}
HOSTPATH_TYPES = {"", "DirectoryOrCreate", "Directory", "FileOrCreate", "File", "Socket", "CharDevice",
                  "BlockDevice"}

def keys(where, obj, kind, required=()):
    if not isinstance(obj, dict):
        bad(where, f"expected a mapping, got {type(obj).__name__}"); return False
    for k in obj:
        if k not in FIELDS[kind]: bad(where, f"unknown field {k!r}")
    for k in required:
        if k not in obj: bad(where, f"missing {k!r}")
    return True

def check_container(where, c, volumes):
    if not keys(where, c, "container", ("name", "image")): return
    if not DNS1123.match(str(c.get("name", ""))): bad(where, f"name {c.get('name')!r} is not a DNS-1123 label")
    for f in ("command", "args"):
        if f in c and not (isinstance(c[f], list) and all(isinstance(a, str) for a in c[f])):
            bad(where, f"{f} must be a list of strings")
    for i, e in enumerate(c.get("env", [])):
        w = f"{where}.env[{i}]"
        if keys(w, e, "env", ("name",)) and ("value" in e) == ("valueFrom" in e):
            bad(w, "exactly one of value, valueFrom")
        if "value" in e and not isinstance(e["value"], str): bad(w, "value must be a string")
        if isinstance(e, dict) and e.get("name") in NODE_SETTINGS and "value" in e: literal_settings.append(w)
        vf = e.get("valueFrom")
        if vf is not None and keys(f"{w}.valueFrom", vf, "valueFrom"):
            ref = vf.get("configMapKeyRef")
            if ref is not None and keys(f"{w}.valueFrom.configMapKeyRef", ref, "keyRef", ("name", "key")):
                key_refs.append((w, ref["name"], ref["key"]))
    ports = set()
    for i, p in enumerate(c.get("ports", [])):
        w = f"{where}.ports[{i}]"
        if keys(w, p, "port", ("containerPort",)):
            if not isinstance(p["containerPort"], int) or not 0 < p["containerPort"] < 65536: bad(w, "containerPort")
            if p.get("protocol", "TCP") not in ("TCP", "UDP", "SCTP"): bad(w, "protocol")
            if p["containerPort"] == 9400: bad(w, "9400 is dcgm-exporter's port")
            ports.add(p["containerPort"]); ports.add(p.get("name"))
    for i, m in enumerate(c.get("volumeMounts", [])):
        w = f"{where}.volumeMounts[{i}]"
        if keys(w, m, "mount", ("name", "mountPath")):
            if m["name"] not in volumes: bad(w, f"no volume {m['name']!r}")
            if not str(m["mountPath"]).startswith("/"): bad(w, "mountPath must be absolute")
            # runc refuses a mount inside /proc ("cannot be mounted because
            # it is inside /proc"), and /sys is the runtime's too.
            if re.match(r"^/(proc|sys)(/|$)", str(m["mountPath"])):
                bad(w, f"mountPath {m['mountPath']} lies inside /proc or /sys: runc refuses it")
    args = c.get("args") or []
    mounts = [str(m.get("mountPath", "")).rstrip("/") for m in c.get("volumeMounts", []) if isinstance(m, dict)]
    for e in c.get("env", []):
        if isinstance(e, dict) and e.get("name") == "CUDACAP_NVIDIA_PROC" and "value" in e:
            path = str(e["value"])
            if not any(path == m or path.startswith(m + "/") for m in mounts):
                bad(where, f"CUDACAP_NVIDIA_PROC {path} lies in no volume mounted into the container")
    for opt in ("--root", "--pod-resources"):
        if opt in args and isinstance(args, list):
            i = args.index(opt)
            path = args[i + 1] if i + 1 < len(args) else None
            if path is None: bad(where, f"{opt} without a value")
            elif path != "none" and not any(path == m or path.startswith(m + "/") for m in mounts):
                bad(where, f"{opt} {path} lies in no volume mounted into the container")
    if "resources" in c and keys(f"{where}.resources", c["resources"], "resources"):
        for k, q in c["resources"].items():
            for r, v in (q or {}).items():
                if r not in ("cpu", "memory") or not QTY.match(str(v)): bad(f"{where}.resources.{k}", f"{r}: {v!r}")
    for pr in ("readinessProbe", "livenessProbe"):
        if pr in c and keys(f"{where}.{pr}", c[pr], "probe"):
            port = (c[pr].get("httpGet") or {}).get("port")
            if port is not None and port not in ports: bad(f"{where}.{pr}", f"port {port!r} is no container port")

def check_daemonset(where, d, installed):
    if d.get("apiVersion") != "apps/v1": bad(where, "apiVersion must be apps/v1")
    spec = d.get("spec", {})
    if not keys(f"{where}.spec", spec, "ds.spec", ("selector", "template")): return
    tmpl = spec["template"]
    keys(f"{where}.template.metadata", tmpl.get("metadata", {}), "meta")
    sel = spec["selector"].get("matchLabels", {})
    labels = tmpl.get("metadata", {}).get("labels", {})
    if not sel or any(labels.get(k) != v for k, v in sel.items()): bad(where, "selector does not match the template's labels")
    ps = tmpl.get("spec", {})
    if not keys(f"{where}.template.spec", ps, "pod.spec", ("containers",)): return
    volumes = {}
    for i, v in enumerate(ps.get("volumes", [])):
        w = f"{where}.volumes[{i}]"
        if not keys(w, v, "volume", ("name",)): continue
        if len([k for k in v if k != "name"]) != 1: bad(w, "exactly one volume source")
        if v["name"] in volumes: bad(w, f"volume {v['name']!r} twice")
        volumes[v["name"]] = v
        hp = v.get("hostPath")
        if hp is not None and keys(f"{w}.hostPath", hp, "hostPath", ("path",)):
            if not str(hp["path"]).startswith("/"): bad(w, "hostPath.path must be absolute")
            if hp.get("type", "") not in HOSTPATH_TYPES: bad(w, f"hostPath.type {hp.get('type')!r}")
    for i, t in enumerate(ps.get("tolerations", [])): keys(f"{where}.tolerations[{i}]", t, "toleration")
    # Which nodes: every term ORed, each term's expressions ANDed; the pod
    # must land on GPU nodes labelled either way (and only on GPU nodes).
    sel = set((k, str(v)) for k, v in (ps.get("nodeSelector") or {}).items())
    terms = []
    aff = ps.get("affinity")
    if aff is not None and keys(f"{where}.affinity", aff, "affinity"):
        na = aff.get("nodeAffinity") or {}
        if keys(f"{where}.affinity.nodeAffinity", na, "nodeAffinity"):
            req = na.get("requiredDuringSchedulingIgnoredDuringExecution") or {}
            if keys(f"{where}.affinity.nodeAffinity.required", req, "nodeSelector"):
                for j, t in enumerate(req.get("nodeSelectorTerms") or []):
                    if not keys(f"{where}.nodeSelectorTerms[{j}]", t, "term"): continue
                    ands = set()
                    for x in t.get("matchExpressions") or []:
                        if keys(f"{where}.nodeSelectorTerms[{j}].matchExpressions", x, "expr", ("key", "operator")):
                            if x["operator"] == "In" and len(x.get("values") or []) == 1:
                                ands.add((x["key"], str(x["values"][0])))
                            elif x["operator"] not in ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"):
                                bad(where, f"node selector operator {x['operator']!r}")
                    terms.append(ands | sel)
    if not terms: terms = [sel]
    for lab in GPU_NODE_LABELS:
        if not any(t == {lab} for t in terms): bad(where, f"no node selector term for {lab[0]}={lab[1]} alone")
    for t in terms:
        if not t & GPU_NODE_LABELS: bad(where, f"a node selector term {sorted(t)} selects nodes that need not have a GPU")
    # hostPID or hostPath: the namespace must admit privileged pods.
    if ps.get("hostPID") or any("hostPath" in v for v in ps.get("volumes", []) if isinstance(v, dict)):
        privileged_in.append((where, d.get("metadata", {}).get("namespace", "default")))
    names = set()
    for kind in ("initContainers", "containers"):
        for i, c in enumerate(ps.get(kind, [])):
            check_container(f"{where}.{kind}[{i}]", c, volumes)
            if isinstance(c, dict):
                if c.get("name") in names: bad(where, f"container name {c.get('name')!r} twice")
                names.add(c.get("name"))
                cmd = (c.get("command") or [None])[0]
                if cmd and cmd not in installed: bad(f"{where}.{kind}[{i}]", f"{cmd} is not in the image")
    ann = tmpl.get("metadata", {}).get("annotations", {})
    if "prometheus.io/port" in ann:
        ports = {p.get("containerPort") for c in ps["containers"] for p in c.get("ports", [])}
        if int(ann["prometheus.io/port"]) not in ports: bad(where, "prometheus.io/port is no container port")

def image_paths(dockerfile):
    """The paths the image holds: COPY destinations (sources must exist) and the installed tree."""
    paths = {"/usr/bin/cudacap"}
    for n, line in enumerate(open(dockerfile), 1):
        m = re.match(r"^COPY\s+(?:--from=\S+\s+)?(\S+)\s+(\S+)\s*$", line)
        if not m: continue
        src, dst = m.groups()
        if "--from" not in line and not os.path.exists(os.path.join(root, src)):
            bad(f"{dockerfile}:{n}", f"COPY source {src} does not exist")
        paths.add(dst)
    return paths

privileged_in = []  # (where, namespace) of pods needing the privileged level
installed = image_paths(os.path.join(root, "deploy/Dockerfile"))
for name in sorted(os.listdir(os.path.join(root, "deploy"))):
    if not name.endswith((".yaml", ".yml")): continue
    path = os.path.join(root, "deploy", name)
    try:
        docs = [d for d in yaml.safe_load_all(open(path)) if d is not None]
    except yaml.YAMLError as e:
        bad(path, f"not YAML: {e}"); continue
    for i, d in enumerate(docs):
        where = f"{name}#{i} {d.get('kind')}/{d.get('metadata', {}).get('name')}"
        for k in ("apiVersion", "kind", "metadata"):
            if k not in d: bad(where, f"missing {k!r}")
        meta = d.get("metadata", {})
        if keys(f"{where}.metadata", meta, "meta", ("name",)) and not DNS1123.match(str(meta.get("name", ""))):
            bad(where, "metadata.name is not a DNS-1123 name")
        if d.get("kind") == "DaemonSet": check_daemonset(where, d, installed)
        elif d.get("kind") == "Namespace": namespaces[meta.get("name")] = meta.get("labels") or {}
        elif d.get("kind") == "ConfigMap":
            data = d.get("data") or {}
            if not all(isinstance(v, str) for v in data.values()): bad(where, "ConfigMap data values must be strings")
            configmaps[meta.get("name")] = data
        elif d.get("kind") not in ("ServiceAccount", "Service"): bad(where, "unexpected kind")
for w, name, key in key_refs:
    if name not in configmaps: bad(w, f"configMapKeyRef names no ConfigMap {name!r}")
    elif key not in configmaps[name]: bad(w, f"ConfigMap {name!r} has no key {key!r}")
for w, ns in privileged_in:
    if namespaces.get(ns, {}).get("pod-security.kubernetes.io/enforce") != "privileged":
        bad(w, f"hostPID/hostPath: namespace {ns!r} must be labelled pod-security.kubernetes.io/enforce: privileged")
# One place for the node's settings: the ConfigMap; the containers read it.
for w in literal_settings:
    bad(w, "a node setting given literally: read it from the ConfigMap cudacap-node (one place)")
for p in problems: print(p)
print(f"deploy check: {len(problems)} problem(s)")
sys.exit(1 if problems else 0)
