"""A DaemonSet's container as `podman run` arguments, read from the manifest
(tests/deploy_image.sh runs the node image with them, so the image is run
with the manifest's mounts, environment and security context rather than
options written into the test).

  python3 tests/pod_args.py MANIFEST CONTAINER HOST_ROOT NODE [KEY=VALUE...]

HOST_ROOT stands for the node's /: a hostPath P is mounted from HOST_ROOT/P
(made for DirectoryOrCreate, required to exist for Directory, as the kubelet
does). NODE is spec.nodeName. KEY=VALUE overrides the ConfigMap's data.
Prints the arguments, NUL-separated: the run options, then "@IMAGE@" where
the image goes, then the command's arguments. What podman cannot express
for one container of a pod is left out and named on stderr: resources (the
test's machine may not delegate cgroup controllers), probes (the test
probes), ports (the test runs on the host network, as hostNetwork would).
Exits 1 naming what it refuses: an unknown container, a Directory hostPath
that does not exist, a value source it does not know. A mount inside /proc
is passed on: runc is the judge of it (tests/deploy_image.sh).
"""
import os
import sys

import yaml


def die(msg):
    print("pod_args: " + msg, file=sys.stderr)
    sys.exit(1)


def main():
    if len(sys.argv) < 5:
        die("usage: pod_args.py MANIFEST CONTAINER HOST_ROOT NODE [KEY=VALUE...]")
    manifest, name, host, node = sys.argv[1:5]
    over = dict(a.split("=", 1) for a in sys.argv[5:])
    docs = [d for d in yaml.safe_load_all(open(manifest)) if d]
    ds = next((d for d in docs if d.get("kind") == "DaemonSet"), None) or die("no DaemonSet in " + manifest)
    cms = {d["metadata"]["name"]: dict(d.get("data") or {}) for d in docs if d.get("kind") == "ConfigMap"}
    pod = ds["spec"]["template"]["spec"]
    cs = (pod.get("initContainers") or []) + pod["containers"]
    c = next((x for x in cs if x["name"] == name), None) or die("no container %r" % name)
    vols = {v["name"]: v for v in pod.get("volumes") or []}
    out = []
    if pod.get("hostPID"):
        out += ["--pid", "host"]
    out += ["--network", "host"]
    for e in c.get("env") or []:
        if "value" in e:
            v = str(e["value"])
        elif "configMapKeyRef" in e.get("valueFrom", {}):
            r = e["valueFrom"]["configMapKeyRef"]
            data = cms.get(r["name"])
            if data is None:
                die("env %s: no ConfigMap %r in the manifest" % (e["name"], r["name"]))
            if r["key"] not in data:
                die("env %s: ConfigMap %r has no key %r" % (e["name"], r["name"], r["key"]))
            v = over.get(r["key"], str(data[r["key"]]))
        elif e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "spec.nodeName":
            v = node
        else:
            die("env %s: a value source this test does not know: %r" % (e["name"], e.get("valueFrom")))
        out += ["-e", "%s=%s" % (e["name"], v)]
    for m in c.get("volumeMounts") or []:
        dst = m["mountPath"]
        v = vols.get(m["name"]) or die("mount %s: no volume %r" % (dst, m["name"]))
        hp = v.get("hostPath") or die("volume %r: only hostPath volumes are run here" % m["name"])
        src = os.path.join(host, hp["path"].lstrip("/"))
        kind = hp.get("type") or ""
        if kind == "DirectoryOrCreate":
            os.makedirs(src, exist_ok=True)
        elif kind == "Directory" and not os.path.isdir(src):
            die("volume %r: hostPath %s (type Directory) does not exist on the node" % (m["name"], hp["path"]))
        elif not os.path.exists(src):
            die("volume %r: hostPath %s does not exist on the node" % (m["name"], hp["path"]))
        out += ["-v", "%s:%s%s" % (src, dst, ":ro" if m.get("readOnly") else "")]
    sc = c.get("securityContext") or {}
    if sc.get("readOnlyRootFilesystem"):
        out += ["--read-only"]
    if sc.get("privileged"):
        out += ["--privileged"]
    if "runAsUser" in sc:
        out += ["--user", str(sc["runAsUser"])]
    if sc.get("allowPrivilegeEscalation") is False:
        out += ["--security-opt", "no-new-privileges"]
    for cap in (sc.get("capabilities") or {}).get("add") or []:
        out += ["--cap-add", cap]
    for cap in (sc.get("capabilities") or {}).get("drop") or []:
        out += ["--cap-drop", cap]
    left = [k for k in ("resources", "readinessProbe", "livenessProbe", "ports") if k in c]
    if left:
        print("pod_args: %s: not run by podman: %s" % (name, ", ".join(left)), file=sys.stderr)
    cmd = list(c.get("command") or [])
    if cmd:
        out += ["--entrypoint", cmd[0]]
    out += ["@IMAGE@"] + cmd[1:] + [str(a) for a in c.get("args") or []]
    sys.stdout.write("\0".join(out) + "\0")


main()
