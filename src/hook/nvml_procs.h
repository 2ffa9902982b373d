/* NVML's list of the processes with a context on a device, for the host
 * pid discovery (hostpid.c) and the memory cap's overhead (the port's nvml_process_memory). */
#ifndef CC_HOOK_NVML_PROCS_H
#define CC_HOOK_NVML_PROCS_H

#include "cudacap/nvml_api.h"

/* The most processes a caller lists at once (its buffers' size). */
#define CC_NVML_PROCS_MAX 128

/* NVML's processes on device ordinal (nvmlDeviceGetComputeRunningProcesses);
 * *n in/out. 0, or -1 (no NVML, too many, error). */
int cc_nvml_procs(int ordinal, nvmlProcessInfo_t *p, unsigned *n);

/* Their pids only: at most CC_NVML_PROCS_MAX into pids, *n of them. 0, or
 * -1 as cc_nvml_procs. */
int cc_nvml_pids(int ordinal, unsigned *pids, unsigned *n);

#endif
