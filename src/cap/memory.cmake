# Memory cap. Paths relative to src/.
# CC_MEMORY_SOURCES: policy without CUDA (also in cudacap_core, for tests).
# The ledger (cap/memledger.h) is cap/mem/, one job a file (ledger_internal.h
# lists them); tests/memory.cmake takes this list from cudacap_core.
list(APPEND CC_MEMORY_SOURCES cap/mem/ledger_attach.c cap/mem/ledger_slots.c
     cap/mem/ledger_rebuild.c cap/mem/ledger_keeper.c cap/mem/ledger_reserve.c
     cap/mem/bind.c cap/mem/admit.c cap/mem/ctx_admit.c cap/mem/over.c)
# CC_MEMORY_HOOK_SOURCES: wrappers and driver-side helpers, libcudacap.so only.
set(CC_MEMORY_HOOK_SOURCES hook/alloc_track.c hook/memory_track.c hook/memory_pool.c
    hook/memory_vmm.c hook/memory_graph.c hook/memory_code.c hook/memory_over.c)
