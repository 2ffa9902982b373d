# The installed tree: cmake --install into a fresh prefix, then what an
# operator gets: the versioned library with its soname and plain-name link,
# the command finding that library (run, cdi, doctor), man pages, bash
# completion, the license. BUILD: the build folder to install.
. "$(dirname "$0")/cli_lib.sh"
P=$CLI_TEST_TMP/prefix
expect 0 "cmake --install" cmake --install "$BUILD" --prefix "$P"
V=$(sed -n 's/^project(cudacap VERSION \([0-9.]*\).*/\1/p' "$(dirname "$0")/../CMakeLists.txt")
L=$(cd "$P" && ls -d lib*/cudacap lib/*/cudacap 2>/dev/null | head -1)
[ -n "$L" ] && ok "library folder $L" || fail "no <libdir>/cudacap under $P: $(cd $P && find . | head -20)"
[ -f "$P/$L/libcudacap.so.$V" ] && [ ! -L "$P/$L/libcudacap.so.$V" ] && ok "libcudacap.so.$V" || fail "no libcudacap.so.$V"
[ "$(readlink "$P/$L/libcudacap.so.${V%%.*}")" = "libcudacap.so.$V" ] && ok "soname link" || fail "soname link"
[ "$(readlink "$P/$L/libcudacap.so")" = "libcudacap.so.${V%%.*}" ] && ok "plain-name link" || fail "plain-name link"
soname=$(objdump -p "$P/$L/libcudacap.so.$V" | awk '$1 == "SONAME" {print $2}')
[ "$soname" = "libcudacap.so.${V%%.*}" ] && ok "soname $soname" || fail "soname '$soname'"
for m in cudacap cudacap-run cudacap-prepare cudacap-set cudacap-status cudacap-metrics cudacap-cdi cudacap-doctor; do
  f=$P/share/man/man1/$m.1.gz
  [ -s "$f" ] && zcat "$f" | grep -q '^\.TH ' && ok "man $m" || fail "man page $m"
done
[ -s "$P/share/doc/cudacap/copyright" ] && ok "copyright file" || fail "no copyright file"
zcat "$P/share/doc/cudacap/changelog.gz" | head -1 | grep -q "^cudacap ($V)" && ok "changelog of $V" \
  || fail "changelog: $(zcat "$P/share/doc/cudacap/changelog.gz" 2>&1 | head -1)"
B=$P/share/bash-completion/completions/cudacap
out=$(bash -c ". '$B' && complete -p cudacap" 2>&1); has "_cudacap" "bash completion loads"
out=$(bash -c ". '$B'; COMP_WORDS=(cudacap st); COMP_CWORD=1; _cudacap; echo \${COMPREPLY[*]}" 2>&1)
has "status" "completes commands"
out=$(bash -c ". '$B'; COMP_WORDS=(cudacap set --d); COMP_CWORD=2; _cudacap; echo \${COMPREPLY[*]}" 2>&1)
has "--dry-run" "completes set's options"
grep -q 'MIT License' "$P/share/doc/cudacap/LICENSE" && ok "LICENSE" || fail "no LICENSE"
[ -f "$P/include/cudacap/cudacap.h" ] && ok "public header" || fail "no include/cudacap/cudacap.h"
R=$P/var/lib/cudacap/containers
[ -d "$R" ] && [ "$(stat -c %a "$R")" = 711 ] && ok "the default root, 0711" || fail "no $R (0711): $(stat -c %a "$R" 2>&1)"
U=$P/lib/systemd/system/cudacap-metrics.service
grep -q "^ExecStart=$P/bin/cudacap metrics --listen :9477\$" "$U" && ok "exporter unit runs the installed command" \
  || fail "unit: $(grep ExecStart "$U" 2>&1)"
# systemd's own parser (offline: no running systemd needed; --man=no: the
# man page lies in this prefix, not where man looks).
if need_tool systemd-analyze systemd; then
  out=$(systemd-analyze verify --man=no "$U" 2>&1); rc=$?
  [ $rc = 0 ] && ok "systemd-analyze verify accepts the unit" || fail "systemd-analyze verify ($rc): $out"
else
  echo "note: systemd-analyze missing (Debian's systemd package): the unit not verified"
fi
find "$P" -name 'libcuda.so*' -o -name 'libnvidia-ml*' -o -name 'cudacap_demo_worker' | grep -q . \
  && fail "simulator or test programs installed" || ok "no simulator, no tests installed"

# The installed command finds the installed library, not the build tree's.
I=$P/bin/cudacap
[ -n "$SANPRE" ] && I="env LD_PRELOAD=$SANPRE $P/bin/cudacap"
W=$(readlink -f "$P/$L")/libcudacap.so
expect 0 "installed run" $I run --mem 64m -- sh -c 'echo "P=$LD_PRELOAD"'
has "$W" "run preloads the installed library"
expect 0 "installed run, a capped program" $I run --mem 64m -- $WORKER alloc --chunk 8 --seconds 0
has "then CUDA_ERROR_OUT_OF_MEMORY; cuMemGetInfo total 0.06 GiB" "the installed library caps at 64 MiB"
expect 0 "installed cdi" $I cdi --name job1 --root $CLI_TEST_TMP/cdiroot
has "\"hostPath\": \"$W\"" "cdi mounts the installed library"
has "\"path\": \"$(readlink -f $P/bin/cudacap)\"" "cdi hook runs the installed command"
finish
