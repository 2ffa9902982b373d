# Memory cap (issue 3). Paths relative to src/.
# CC_MEMORY_SOURCES: policy without CUDA (also in cudacap_core, for tests).
list(APPEND CC_MEMORY_SOURCES cap/memledger.c hook/alloc_track.c)
# CC_MEMORY_HOOK_SOURCES: wrappers and driver-side helpers, libcudacap.so only.
set(CC_MEMORY_HOOK_SOURCES hook/memory_acct.c hook/memory_pool.c hook/memory_vmm.c
    hook/memory_graph.c hook/memory_ctx.c hook/memory_code.c)
