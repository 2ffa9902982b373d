/* Between the memory policy's files (bind.c, admit.c): not for the hook. */
#ifndef CC_CAP_MEM_BIND_H
#define CC_CAP_MEM_BIND_H

/* The ordinal this process bound to ledger handle h (binding it fully if a
 * fork left it unmeasured), or -1. Reads the bindings only: never starts
 * device discovery, which NVML-only processes must not do. */
int cc_mem_bound_ordinal(int h);

#endif
