#!/usr/bin/env bash
# README's two commands on a fresh Debian 12 machine: a minbase root made
# with debootstrap holding only the packages README's "apt-get install"
# line names, imported into podman, run under runc without a network on a
# copy of HEAD (git archive): scripts/demo.sh, then scripts/test.sh. Checks
# that README names everything the build and the suite need (optional
# tools are skipped with a note there, as README says).
# Not in CI yet: on 2 cores it takes about 5 minutes, which would put CI past
# its 25 (docs/testing.md, "README's commands on a fresh machine").
# Usage, as root from the repository root (podman, runc, debootstrap):
#   tests/readme_fresh.sh [WORK_DIR]     (WORK_DIR: /tmp/readme-fresh)
#   MIRROR=http://deb.debian.org/debian DEBS=a .deb cache folder to reuse
set -u
W=${1:-/tmp/readme-fresh}; R=$(pwd)
pkgs=$(tr '\n' ' ' < README.md | sed -n 's/.*On Debian: `apt-get install \([^`]*\)`.*/\1/p' | tr -s ' ' ',' | sed 's/,$//')
[ -n "$pkgs" ] || { echo "FAIL: no apt-get install line in README.md"; exit 1; }
echo "== README's packages: $pkgs"
rm -rf "$W" && mkdir -p "$W/src" "${DEBS:=$W/debs}"
debootstrap --variant=minbase --cache-dir="$DEBS" --include="$pkgs" bookworm "$W/root" \
  "${MIRROR:-http://deb.debian.org/debian}" > "$W/debootstrap.log" 2>&1 || { tail -5 "$W/debootstrap.log"; exit 1; }
tar -C "$W/root" -cf "$W/root.tar" . && rm -rf "$W/root"
git -C "$R" archive HEAD | tar -x -C "$W/src"
P=(podman --root "$W/storage" --runroot "/tmp/cc-pod-fresh-$$" --storage-driver overlay --runtime runc
   --cgroup-manager cgroupfs --events-backend none)
"${P[@]}" import -q "$W/root.tar" localhost/readme-fresh > /dev/null || { echo "FAIL: podman import"; exit 1; }
"${P[@]}" run --rm --privileged --network none --ulimit nofile=1024:1024 --ulimit nproc=4096:4096 \
  -v "$W/src:/src:ro" localhost/readme-fresh bash -c '
    cp -a /src /w && cd /w || exit 1
    scripts/demo.sh > /tmp/demo.log 2>&1; d=$?; echo "== scripts/demo.sh: rc $d"; tail -6 /tmp/demo.log
    scripts/test.sh > /tmp/test.log 2>&1; t=$?; echo "== scripts/test.sh: rc $t"
    grep -E "tests passed|\*\*\*(Failed|Timeout|Exception)" /tmp/test.log
    [ $t = 0 ] || grep -B2 -A25 "\*\*\*Failed" /tmp/test.log | head -120
    [ $d = 0 ] && [ $t = 0 ]'
rc=$?
"${P[@]}" rmi -f localhost/readme-fresh > /dev/null 2>&1
echo "== readme_fresh: rc $rc"
exit $rc
