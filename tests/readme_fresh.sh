#!/usr/bin/env bash
# README's two commands on a fresh Debian 12 machine: a minbase root made
# with debootstrap holding only the packages README's "apt-get install"
# line names, imported into podman, run under runc without a network on a
# copy of HEAD (git archive; uncommitted changes are not in it):
# scripts/demo.sh, then scripts/test.sh. Checks that README names everything
# the build and the suite need (optional tools are skipped with a note
# there, as README says).
# ctest readme.fresh (label image, run by .ci/run; about 5 minutes on 2
# cores). Skipped (77) without root, podman, runc, debootstrap or git, or
# outside a git checkout; with CUDACAP_REQUIRE_TOOLS=1 a missing tool fails.
# By hand, as root from the repository root:
#   tests/readme_fresh.sh [WORK_DIR]     (WORK_DIR: /tmp/readme-fresh)
#   MIRROR=http://deb.debian.org/debian DEBS=a .deb cache folder to reuse
#   DEPLOY_IMAGE_CACHE=deploy.image's cache: its build-stage root, made from
#   the same packages, is taken instead of a new debootstrap
set -u
# cli_lib.sh for need_tool; by hand its scratch folder is /tmp/readme-fresh.
: "${CLI_TEST_TMP:=/tmp/readme-fresh}" "${CUDACAP:=cudacap}"
. "$(dirname "$0")/cli_lib.sh"
cd "$(dirname "$0")/.." || exit 1
[ "$(id -u)" = 0 ] || { echo "skip: needs root"; exit 77; }
need_tool podman podman && need_tool runc runc && need_tool debootstrap debootstrap && need_tool git git ||
  { echo "skip: no podman/runc/debootstrap/git"; exit 77; }
git rev-parse --verify -q HEAD > /dev/null || { echo "skip: not a git checkout"; exit 77; }
W=${1:-$CLI_TEST_TMP}; R=$(pwd)
pkgs=$(readme_packages)
[ -n "$pkgs" ] || { echo "FAIL: no apt-get install line in README.md"; exit 1; }
echo "== README's packages: $pkgs"
rm -rf "$W/root" "$W/src" && mkdir -p "$W/src" "${DEBS:=$W/debs}"
MIRROR=${MIRROR:-http://deb.debian.org/debian}
# deploy.image's build-stage root is this root (the same debootstrap of the
# same packages, its stamp says so): taken when it is there.
base=${DEPLOY_IMAGE_CACHE:-/nonexistent}/build-base.tar
if [ "$(cat "$base.stamp" 2>/dev/null)" = "bookworm minbase $pkgs $MIRROR" ]; then
  cp "$base" "$W/root.tar" || exit 1
  echo "== the root: deploy.image's build-stage root ($base)"
else
  t=$SECONDS
  debootstrap --variant=minbase --cache-dir="$DEBS" --include="$pkgs" bookworm "$W/root" \
    "$MIRROR" > "$W/debootstrap.log" 2>&1 || { tail -5 "$W/debootstrap.log"; exit 1; }
  echo "== debootstrap: $((SECONDS - t)) s"
  tar -C "$W/root" -cf "$W/root.tar" . && rm -rf "$W/root"
fi
git -C "$R" archive HEAD | tar -x -C "$W/src"
P=(podman --root "$W/storage" --runroot "/tmp/cc-pod-fresh-$$" --storage-driver overlay --runtime runc
   --cgroup-manager cgroupfs --events-backend none)
"${P[@]}" import -q "$W/root.tar" localhost/readme-fresh > /dev/null || { echo "FAIL: podman import"; exit 1; }
# The commands inside the root, from a file (a quoted here-document: no
# quoting to get wrong; in a single-quoted bash -c an apostrophe in a
# comment once ended the script early and ran the suite on the host).
cat > "$W/inner.sh" <<'INNER'
cp -a /src /w && cd /w || exit 1
s=$SECONDS; scripts/demo.sh > /tmp/demo.log 2>&1; d=$?
echo "== scripts/demo.sh: rc $d in $((SECONDS - s)) s"; tail -6 /tmp/demo.log
# README's test command from an empty build folder: the build, then the suite.
s=$SECONDS; scripts/test.sh > /tmp/test.log 2>&1; t=$?
echo "== scripts/test.sh: rc $t in $((SECONDS - s)) s"
grep -E "tests passed|\*\*\*(Failed|Timeout|Exception)" /tmp/test.log
# A failed test: its checks that failed (its own lines, not the
# library's CUDACAP_COUNT_CALLS lines that can fill a screen).
[ $t = 0 ] || grep -E "\*\*\*Failed|FAIL|CHECK|check\(s\) failed|want" /tmp/test.log | grep -v "^cudacap\[" | head -60
[ $d = 0 ] && [ $t = 0 ] && echo "== inside the fresh root: done"
INNER
"${P[@]}" run --rm --privileged --network none --ulimit nofile=1024:1024 --ulimit nproc=4096:4096 \
  -v "$W/src:/src:ro" -v "$W/inner.sh:/inner.sh:ro" localhost/readme-fresh bash /inner.sh | tee "$W/inner.log"
[ "${PIPESTATUS[0]}" = 0 ] && grep -q "^== inside the fresh root: done" "$W/inner.log"
rc=$?
"${P[@]}" rmi -f localhost/readme-fresh > /dev/null 2>&1
rm -rf "/tmp/cc-pod-fresh-$$" # podman's run state: not left in /tmp by every run
# Kept for a look when it failed; gone when it passed (about 1 GB).
[ $rc = 0 ] && rm -rf "$W/storage" "$W/root.tar" "$W/src" "$W/inner.sh" "$W/inner.log"
echo "== readme_fresh: rc $rc"
exit $rc
