/* The memory wrappers' bookkeeping (memory_track.h). */
#include "memory_track.h"

#include "cap/memledger.h"
#include "common/log.h"
#include "memory_graph.h"

/* An allocation the table could not remember stays counted (never
 * under-count): said once. */
void cc_mem_track_lost(void)
{
    cc_log_once(CC_LOG_WARN, "memory cap: out of memory tracking allocations; some frees "
                             "will not be credited");
}

void cc_mem_untrack_release(int kind, uint64_t key)
{
    struct cc_at_val v;
    if (cc_at_take(kind, key, &v)) cc_ml_release(v.h, v.bytes);
}

void cc_mem_refresh_own(void)
{
    cc_mem_pools_refresh();
    cc_mem_graph_refresh();
}
