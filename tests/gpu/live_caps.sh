#!/usr/bin/env bash
# cudacap set on a real GPU (issue: limits changed while the container runs):
# a PyTorch process whose memory cap is raised and lowered while it runs, and
# an SM cap raised and lowered during a Triton loop. Usage:
#   tests/gpu/live_caps.sh BUILD_DIR
# Prints figures; docs/validation.md records them.
set -u
B=$(cd "${1:-build}" && pwd); D=$(cd "$(dirname "$0")" && pwd)
LIB=$B/lib/libcudacap.so; export CLI=$B/bin/cudacap
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
R=$(mktemp -d); S=$R/c
"$CLI" prepare --mem 4g "$S" >/dev/null || { echo "prepare failed"; exit 1; }
echo "== memory (prepared --mem 4g)"
CUDACAP_STATE_DIR=$S LD_PRELOAD=$LIB timeout 180 python3 "$D/live_caps.py" mem 2>&1 | grep -v Warning
bare=$(timeout 120 python3 "$D/live_caps.py" bare 2>&1 | sed -n 's/^bare_per_s //p')
echo "== SM (prepared --sm 30), bare Triton loop: $bare per s"
"$CLI" prepare --sm 30 "$R/s" >/dev/null
CUDACAP_STATE_DIR=$R/s LD_PRELOAD=$LIB timeout 180 python3 "$D/live_caps.py" sm "$bare" 2>&1 | grep -v Warning
