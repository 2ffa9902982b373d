#!/bin/sh
# cudacap's node installer: copies the library from this image onto the
# host, the way HAMi's vgpu-init.sh does, and on HAMi nodes under the name
# HAMi's device plugin mounts into pods. Runs as the DaemonSet's
# initContainer (--once) and as its sidecar (--watch SECONDS): HAMi's
# vgpu-init.sh copies its own libvgpu.so.<version> back whenever its
# checksum differs (at every plugin restart), so the sidecar puts cudacap's
# back. docs/kubernetes.md describes it.
#
#   node-install.sh [--once | --watch SECONDS | --uninstall]
# --uninstall: the rollback. HAMi's files are put back from their *.hami
# copies, a HAMi name that had no file of HAMi's before is removed when it
# still holds this library, and cudacap's own copy (LIB_DIR, the command in
# CLI_DIR, CDI_SPEC) is removed. Delete the DaemonSet first: its sidecar
# would install again.
# Environment:
#   HOST_ROOT      where the host's / is mounted (default /host)
#   SRC_LIB        the library in this image (default: next to this script's
#                  ../lib/*/cudacap/libcudacap.so or /usr/lib/*/cudacap/)
#   LIB_DIR        host folder for cudacap's own copy (default /usr/local/lib/cudacap)
#   HAMI_DIR       HAMi's host folder (default /usr/local/vgpu); "" disables HAMi mode
#   HAMI_VERSION   the HAMi device plugin's version: also write libvgpu.so.<it>,
#                  which the plugin's GetLibPath prefers over libvgpu.so
#   CDI_SPEC       if set, also write this CDI spec on the host (needs the command
#                  on the host: CLI_DIR)
#   CLI_DIR        host folder for the cudacap command (default: not copied)
set -eu
mode=once
interval=30
case "${1:-}" in
  ""|--once) ;;
  --watch) mode=watch; interval=${2:?--watch needs SECONDS}
           case "$interval" in *[!0-9]*|"") echo "node-install: --watch SECONDS: \"$interval\" is not a number" >&2; exit 2 ;; esac ;;
  --uninstall) mode=uninstall ;;
  -h|--help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "node-install: unknown argument \"$1\" (--once, --watch SECONDS or --uninstall)" >&2; exit 2 ;;
esac
HOST_ROOT=${HOST_ROOT:-/host}
LIB_DIR=${LIB_DIR:-/usr/local/lib/cudacap}
HAMI_DIR=${HAMI_DIR-/usr/local/vgpu}
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "${SRC_LIB:-}" ]; then
  for c in "$here"/../../lib/*/cudacap/libcudacap.so "$here"/../../lib/cudacap/libcudacap.so \
           /usr/lib/*/cudacap/libcudacap.so /usr/local/lib/cudacap/libcudacap.so; do
    [ -f "$c" ] && SRC_LIB=$c && break
  done
fi
[ -n "${SRC_LIB:-}" ] && [ -f "$SRC_LIB" ] || { echo "node-install: no libcudacap.so in this image (set SRC_LIB)" >&2; exit 1; }
[ -d "$HOST_ROOT" ] || { echo "node-install: HOST_ROOT $HOST_ROOT is not a folder (mount the host's / there)" >&2; exit 1; }

sum() { md5sum "$1" 2>/dev/null | cut -d' ' -f1; }
# put SRC DEST: DEST becomes a copy of SRC, atomically (readers never see a
# partial file: a pod starting now maps either the old or the new library).
put() {
  [ "$(sum "$1")" = "$(sum "$2")" ] && return 1
  mkdir -p "$(dirname "$2")"
  cp "$1" "$2.cudacap-tmp.$$" && chmod 0755 "$2.cudacap-tmp.$$" && mv -f "$2.cudacap-tmp.$$" "$2"
  echo "node-install: wrote $2"
}

install_once() {
  real=$(readlink -f "$SRC_LIB")
  v=${real##*/libcudacap.so.}
  d=$HOST_ROOT$LIB_DIR
  put "$real" "$d/libcudacap.so.$v" || true
  ln -sfn "libcudacap.so.$v" "$d/libcudacap.so.${v%%.*}"
  ln -sfn "libcudacap.so.${v%%.*}" "$d/libcudacap.so"
  if [ -n "${CLI_DIR:-}" ] && [ -x "$here/cudacap" ]; then put "$here/cudacap" "$HOST_ROOT$CLI_DIR/cudacap" || true; fi
  h=$HOST_ROOT$HAMI_DIR
  # A HAMi node: its folder holds HAMi's library (vgpu-init.sh copied it) or
  # its ld.so.preload, or the plugin's version was given.
  if [ -n "$HAMI_DIR" ] && { [ -n "${HAMI_VERSION:-}" ] || ls "$h"/libvgpu.so* "$h"/ld.so.preload >/dev/null 2>&1; }; then
    # Every name the plugin may mount: libvgpu.so.<version> (preferred when
    # it exists) and libvgpu.so. HAMi's own file is kept once as *.hami.
    names="libvgpu.so"
    for f in "$h"/libvgpu.so.*; do
      case "$f" in *.hami|*.cudacap-tmp.*) continue ;; esac
      [ -f "$f" ] && names="$names ${f##*/}"
    done
    [ -n "${HAMI_VERSION:-}" ] && names="$names libvgpu.so.$HAMI_VERSION"
    for n in $names; do
      if [ -f "$h/$n" ] && [ ! -e "$h/$n.hami" ] && [ "$(sum "$h/$n")" != "$(sum "$real")" ]; then
        cp -p "$h/$n" "$h/$n.hami"
      fi
      put "$real" "$h/$n" || true
    done
  fi
  if [ -n "${CDI_SPEC:-}" ] && [ -n "${CLI_DIR:-}" ]; then
    chroot "$HOST_ROOT" "$CLI_DIR/cudacap" cdi --name "${CDI_NAME:-default}" --output "$CDI_SPEC" \
      --lib "$LIB_DIR/libcudacap.so" || echo "node-install: cdi spec not written" >&2
  fi
}

# The rollback (--uninstall). Only files this installer wrote are touched:
# a HAMi name is restored from its *.hami copy, or removed when it holds
# this library and HAMi never had a file there.
uninstall() {
  real=$(readlink -f "$SRC_LIB")
  h=$HOST_ROOT$HAMI_DIR
  if [ -n "$HAMI_DIR" ] && [ -d "$h" ]; then
    for f in "$h"/libvgpu.so "$h"/libvgpu.so.*; do
      case "$f" in *.cudacap-tmp.*) rm -f "$f"; continue ;; *.hami) continue ;; esac
      [ -e "$f" ] || [ -e "$f.hami" ] || continue
      if [ -f "$f.hami" ]; then
        mv -f "$f.hami" "$f" && echo "node-install: restored HAMi's $f"
      elif [ -f "$f" ] && [ "$(sum "$f")" = "$(sum "$real")" ]; then
        rm -f "$f" && echo "node-install: removed $f (HAMi had none)"
      fi
    done
  fi
  d=$HOST_ROOT$LIB_DIR
  if [ -d "$d" ]; then
    rm -f "$d"/libcudacap.so "$d"/libcudacap.so.*
    rmdir "$d" 2>/dev/null || true
    echo "node-install: removed $d/libcudacap.so*"
  fi
  if [ -n "${CLI_DIR:-}" ] && [ -f "$HOST_ROOT$CLI_DIR/cudacap" ] && [ -x "$here/cudacap" ] &&
     [ "$(sum "$HOST_ROOT$CLI_DIR/cudacap")" = "$(sum "$here/cudacap")" ]; then
    rm -f "$HOST_ROOT$CLI_DIR/cudacap" && echo "node-install: removed $HOST_ROOT$CLI_DIR/cudacap"
  fi
  if [ -n "${CDI_SPEC:-}" ] && [ -f "$HOST_ROOT$CDI_SPEC" ]; then
    rm -f "$HOST_ROOT$CDI_SPEC" && echo "node-install: removed $HOST_ROOT$CDI_SPEC"
  fi
}

if [ "$mode" = uninstall ]; then uninstall; exit 0; fi
install_once
[ "$mode" = once ] && exit 0
trap 'exit 0' TERM INT
while :; do
  sleep "$interval" & wait $!
  install_once
done
