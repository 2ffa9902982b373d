#!/usr/bin/env bash
# Builds the Debian package (CPack DEB, prefix /usr, library and command only)
# in build-pkg/, then checks it the way a node gets it: unpacked with dpkg -x
# into a fresh folder, the tree, the package fields, and the unpacked command
# finding the unpacked library. Prints the package's path.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build-pkg
rm -f $dir/cudacap_*.deb $dir/cudacap-dbgsym_*.ddeb
cmake -S . -B $dir -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr -DCUDACAP_BUILD_TESTS=OFF >/dev/null
cmake --build $dir -j"$(nproc)" >/dev/null
(cd $dir && cpack -G DEB >/dev/null)
deb=$(ls -t $dir/cudacap_*.deb | head -1)
x=$(mktemp -d)
trap 'rm -rf "$x"' EXIT
dpkg -x "$deb" "$x"
fail() { echo "package check: $*" >&2; exit 1; }
ma=$(gcc -print-multiarch 2>/dev/null || true)
libdir=usr/lib${ma:+/$ma}/cudacap
[ -f "$x/$libdir/libcudacap.so.0" ] || [ -L "$x/$libdir/libcudacap.so.0" ] || fail "no $libdir/libcudacap.so.0"
[ -L "$x/$libdir/libcudacap.so" ] || fail "no $libdir/libcudacap.so link"
[ -x "$x/usr/bin/cudacap" ] || fail "no usr/bin/cudacap"
[ -x "$x/usr/share/cudacap/node-install.sh" ] || fail "no node installer"
scripts/check-glibc.sh "$x/$libdir/libcudacap.so" 2.17 >/dev/null || fail "the packaged library needs a glibc above 2.17"
for m in "$x"/usr/share/man/man1/*; do
  case "$m" in *.1.gz) gzip -t "$m" || fail "bad man page $m" ;; *) fail "uncompressed man page $m" ;; esac
done
[ -f "$x/usr/share/man/man1/cudacap.1.gz" ] || fail "no man page"
[ -f "$x/usr/share/doc/cudacap/copyright" ] || fail "no copyright file"
zcat "$x/usr/share/doc/cudacap/changelog.gz" | head -1 | grep -q "^cudacap ($(dpkg-deb -f "$deb" Version))" \
  || fail "no changelog for this version"
for b in "$x/usr/bin/cudacap" "$x/$libdir"/libcudacap.so.*.*.*; do
  ! readelf -S "$b" | grep -q '\.symtab' || fail "not stripped: $b"
done
ls "$dir"/cudacap-dbgsym_*.ddeb >/dev/null 2>&1 || fail "no debug symbols package (cudacap-dbgsym)"
[ -f "$x/usr/share/bash-completion/completions/cudacap" ] || fail "no completion"
[ -f "$x/usr/share/doc/cudacap/LICENSE" ] || fail "no LICENSE"
[ -f "$x/usr/include/cudacap/cudacap.h" ] || fail "no public header"
[ -d "$x/var/lib/cudacap/containers" ] || fail "no /var/lib/cudacap/containers"
grep -qx 'ExecStart=/usr/bin/cudacap metrics --listen :9477' "$x/usr/lib/systemd/system/cudacap-metrics.service" \
  || fail "no exporter unit running /usr/bin/cudacap"
sim=$(find "$x" -name 'libcuda.so*' -o -name 'libnvidia-ml.so*')
[ -z "$sim" ] || fail "simulator in the package: $sim"
fields=$(dpkg-deb -f "$deb" Package Version Depends) # captured: grep -q under pipefail would SIGPIPE dpkg-deb
case "$fields" in *"Package: cudacap"*) ;; *) fail "fields: $fields" ;; esac
case "$fields" in *"Depends: "*libc6*) ;; *) fail "no libc6 dependency: $fields" ;; esac
want="$(readlink -f "$x/$libdir")/libcudacap.so"
got=$(env -u LD_PRELOAD "$x/usr/bin/cudacap" run --state "$x/state" -- sh -c 'echo "$LD_PRELOAD"')
[ "${got%%:*}" = "$want" ] || fail "the unpacked command preloads '$got', not $want"
spec=$("$x/usr/bin/cudacap" cdi --name job1 --root /var/lib/cudacap/containers)
case "$spec" in *"\"hostPath\": \"$want\""*) ;; *) fail "cdi does not name the unpacked library" ;; esac
# Debian's own checker on the package: no error, no warning (overrides:
# packaging/debian/). Not on cudacap-dbgsym: CMake 3.25 writes its md5sums
# with build-tree paths, which lintian rejects; the package itself is fine.
if command -v lintian >/dev/null; then
  out=$(lintian --fail-on error,warning --tag-display-limit 0 "$deb" 2>&1) \
    || fail "lintian: $(printf '%s\n' "$out" | grep -v 'root privileges')"
elif [ "${CUDACAP_REQUIRE_TOOLS:-}" = 1 ]; then
  fail "no lintian (Debian package lintian) and CUDACAP_REQUIRE_TOOLS=1"
else
  echo "note: no lintian; the package's policy check skipped"
fi
echo "package ok: $deb ($(dpkg-deb -f "$deb" Version), $(du -k "$deb" | cut -f1) KiB)"
