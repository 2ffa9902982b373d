#!/bin/sh
# Runs a client with cudacap injected through /etc/ld.so.preload (how the HAMi
# and Volcano device plugins inject their library) instead of LD_PRELOAD.
# The real /etc is untouched: a private mount namespace gets a copy of /etc
# with an ld.so.preload in it. Needs root and unshare; otherwise skips (77).
# usage: run_etc_preload.sh "PRELOAD_LIST(colon separated)" CLIENT [ARGS...]
set -eu
list=$1; shift
# CI installs its tools as root (CUDACAP_REQUIRE_TOOLS=1): there a skip
# would hide a lost test, so it fails.
skip() {
    [ "${CUDACAP_REQUIRE_TOOLS:-0}" = 1 ] && { echo "FAIL: $1, and CUDACAP_REQUIRE_TOOLS=1"; exit 1; }
    echo "skip: $1"; exit 77
}
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null; then
    skip "needs root and unshare"
fi
if ! unshare -m true 2>/dev/null; then
    skip "cannot create a mount namespace here"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -a /etc/. "$tmp/etc/" 2>/dev/null || cp -r /etc/. "$tmp/etc/"
echo "$list" | tr ':' '\n' > "$tmp/etc/ld.so.preload"
unset LD_PRELOAD
exec unshare -m sh -c 'mount --bind "$1/etc" /etc && shift && exec "$@"' sh "$tmp" "$@"
