#!/usr/bin/env bash
# Where a launch-bound PyTorch loop's time goes under cudacap: the token loop
# of step_latency.py, three processes each of bare, preloaded with a memory
# cap only (the hooks, no compute gate), a 50 % compute cap, and the same
# with CUDACAP_COUNT_CALLS=1 (the wrappers the loop goes through), all
# pinned to cores 4,5. Usage, from the repository root:
#   tests/gpu/tokattr.sh BUILD_DIR
# Figures: docs/validation.md, 2026-12-02, "pacing, second step".
B=$1; LIB=$(cd "$B" && pwd)/lib/libcudacap.so; D=tests/gpu
for r in 1 2 3; do
  for v in bare mem sm50 sm50w; do
    st=$(mktemp -d)
    case $v in
      bare) taskset -c 4,5 python3 $D/step_latency.py tokloop 3 $st/res ;;
      mem) CUDACAP_STATE_DIR=$st CUDACAP_MEM_LIMIT=8g LD_PRELOAD=$LIB taskset -c 4,5 python3 $D/step_latency.py tokloop 3 $st/res ;;
      sm50) CUDACAP_STATE_DIR=$st CUDACAP_SM_LIMIT=50 LD_PRELOAD=$LIB taskset -c 4,5 python3 $D/step_latency.py tokloop 3 $st/res ;;
      sm50w) CUDACAP_STATE_DIR=$st CUDACAP_SM_LIMIT=50 CUDACAP_COUNT_CALLS=1 LD_PRELOAD=$LIB taskset -c 4,5 python3 $D/step_latency.py tokloop 3 $st/res 2>$st/calls ;;
    esac > /dev/null 2>&1
    echo "run $r $v: $(cat $st/res 2>/dev/null)"
    [ $v = sm50w ] && [ $r = 1 ] && tail -30 $st/calls
  done
done
