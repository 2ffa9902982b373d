/* Graph memory (memory nodes) under the memory cap: what the launch
 * wrappers of src/hook/launch.c call. Rule and proof: memory_graph.c and
 * docs/memory.md "Graph memory". */
#ifndef CC_MEMORY_GRAPH_H
#define CC_MEMORY_GRAPH_H

#include <cuda.h>

/* The type of cuGraphLaunch, cuGraphLaunch_ptsz, cuGraphUpload(_ptsz). */
typedef CUresult (*cc_graph_run_fn)(CUgraphExec, CUstream);

/* Runs real(exec, stream) (a launch or an upload, which is when the driver
 * backs a graph's allocation nodes with memory) with graph memory counted:
 * refuses with CUDA_ERROR_OUT_OF_MEMORY, without calling real, when the
 * exec's allocation nodes do not fit under the cap; afterwards settles the
 * charge to the device's graph reserve. Cost when the process has no exec
 * with allocation nodes on a capped device: one relaxed load and a branch. */
CUresult cc_mem_graph_launch(CUgraphExec exec, CUstream stream, cc_graph_run_fn real);

/* Settles the graph charge of every device that has graph memory to the
 * driver's reserve (gives back what frees and trims released). Skips when
 * another thread is settling. Called before refusals and in queries. */
void cc_mem_graph_refresh(void);

#endif
