/* The port: the cap layer's only way out. Policy (src/cap/) never
 * calls the driver, NVML or the hook layer by name; it calls these entries,
 * which the hook layer fills (src/hook/port_real.c) over the real libraries
 * and installs at the first CUDA call's init. Before that, and in programs
 * without the hook layer (tests linking libcudacap_core), cc_port() returns
 * a default port whose every entry fails cleanly as documented below, so cap
 * code never checks for NULL.
 *
 * Every entry of an installed port is non-NULL. Unless said otherwise an
 * entry is thread-safe, async-signal-unsafe, and may be called after fork
 * in the child (the real port holds no per-process state of its own).
 *
 * Cost: cc_port() is one acquire load of a static pointer (a plain load on
 * x86-64, ldar on aarch64); the driver entries of the real port ARE the
 * driver's functions (no wrapper), so a call through the port costs what the
 * cached function pointer it replaces cost: one indirect call. */
#ifndef CC_CAP_PORT_H
#define CC_CAP_PORT_H

#include <cuda.h>
#include <stdint.h>

#include "cudacap/nvml_api.h"

#define CC_PORT_UUID_LEN 48 /* as hook/devices.h's CC_UUID_LEN */

typedef struct cc_port {
    /* --- driver: timing events (cost.c). CUDA semantics; may block only as
     * the driver's own calls do. Missing in the driver: CUDA_ERROR_NOT_SUPPORTED
     * with the out-parameters untouched. */
    /* *ev created in the current context; failure leaves *ev unspecified. */
    CUresult (*event_create)(CUevent *ev, unsigned int flags);
    /* Records ev into s (legacy default-stream semantics). */
    CUresult (*event_record)(CUevent ev, CUstream s);
    /* The same with per-thread default-stream semantics; the real port uses
     * event_record where the driver has no _ptsz variant. */
    CUresult (*event_record_ptsz)(CUevent ev, CUstream s);
    /* CUDA_SUCCESS once ev completed, CUDA_ERROR_NOT_READY before; never
     * blocks. "Potentially unsafe" during a capture (capture.h). */
    CUresult (*event_query)(CUevent ev);
    /* ms between two completed events. */
    CUresult (*event_elapsed)(float *ms, CUevent start, CUevent end);
    /* Frees ev (may block until work recorded on it is done). */
    CUresult (*event_destroy)(CUevent ev);

    /* CUDA_SUCCESS once every launch and event recorded into s has
     * completed, CUDA_ERROR_NOT_READY before; never blocks (cuStreamQuery).
     * "Potentially unsafe" during a capture, and a use of the legacy stream
     * (capture.h); the gate asks only while no capture is live. _ptsz: the
     * per-thread default stream's semantics (the legacy entry where the
     * driver has no _ptsz variant). */
    CUresult (*stream_query)(CUstream s);
    CUresult (*stream_query_ptsz)(CUstream s);

    /* --- driver: contexts and stream capture (cost.c, capture.c). */
    /* *ctx = the calling thread's current context (NULL when none). */
    CUresult (*ctx_get_current)(CUcontext *ctx);
    /* *st = s's capture status; legacy and per-thread (_ptsz) variants, the
     * latter the former where the driver lacks it. Failure: *st untouched. */
    CUresult (*stream_is_capturing)(CUstream s, CUstreamCaptureStatus *st);
    CUresult (*stream_is_capturing_ptsz)(CUstream s, CUstreamCaptureStatus *st);
    /* Swaps the calling thread's capture mode with *mode (CUDA 10.1+);
     * failure (older driver): the thread's mode is unchanged. */
    CUresult (*exchange_capture_mode)(CUstreamCaptureMode *mode);

    /* --- NVML (watcher.c). */
    /* Loads NVML once (may block on the loader the first time; idempotent,
     * thread-safe). 0 when nvml_process_utilization can be called, -1 when
     * NVML or that entry is absent. Call before the first
     * nvml_process_utilization. */
    int (*nvml_open)(void);
    /* nvmlDeviceGetProcessUtilization. Before a successful nvml_open or
     * without it: NVML_ERROR_FUNCTION_NOT_FOUND, *n untouched. */
    nvmlReturn_t (*nvml_process_utilization)(nvmlDevice_t dev, nvmlProcessUtilizationSample_t *buf,
                                             unsigned int *n, unsigned long long since_us);
    /* nvmlDeviceGetUtilizationRates: *gpu_pct = the percent of NVML's last
     * sampling period in which any kernel ran on the device (the H200: one
     * stepped value every 200 ms). 14 us of CPU a call against the
     * per-process query's 2.3 ms on the H200 (nvmlDeviceGetSamples, which
     * has timestamps, costs 2.1 ms: bench/watcher_cost.c). Failures as
     * nvml_process_utilization's, *gpu_pct untouched. */
    nvmlReturn_t (*nvml_device_utilization)(nvmlDevice_t dev, unsigned int *gpu_pct);
    /* The pids (host pids, as NVML names them) of the processes with a
     * context on device `ordinal` (nvmlDeviceGetComputeRunningProcesses,
     * 6 us on the H200): at most *n into pids, *n set to their count. 0, or
     * -1 (no NVML, more than *n, an error; outputs unspecified). */
    int (*nvml_running_pids)(int ordinal, uint32_t *pids, unsigned int *n);
    /* The device memory NVML says process `pid` (a host pid) holds on device
     * `ordinal` (the same process list, its usedGpuMemory): 1 with *bytes
     * set, 0 when it cannot tell (no NVML, the pid not listed, the figure
     * not available: MIG). Not on a hot path: a binding, a refusal (at most
     * every 50 ms), a memory query. */
    int (*nvml_process_memory)(int ordinal, uint32_t pid, uint64_t *bytes);

    /* --- the hook layer's own memory (cap/mem). */
    /* Drops from the ledger what this process's pools and graphs no longer
     * hold (pools trimmed, graph execs destroyed): the memory cap's retry
     * before a refusal and its view. Takes the hook's pool and graph locks
     * (docs/design.md, "Locks"); never blocks on another process. */
    void (*mem_refresh_own)(void);

    /* --- devices (compute_setup.c, gate.c). */
    /* The ordinal of the calling thread's current context, -1 when none
     * (or before the devices are known). Called on every capped launch:
     * a load when there is one device, else one driver call. */
    int (*device_current)(void);
    /* The ordinal of the device work on stream s runs on (ptsz: s came to a
     * per-thread-default-stream entry point): the current context's for
     * NULL and the special handles, else the stream's own, whichever
     * context is current; -1 when it cannot tell. Called on every capped
     * launch instead of device_current: a load with one device, else one
     * driver call (three on a driver before CUDA 12.8). */
    int (*device_of_stream)(CUstream s, int ptsz);
    /* The device with CUDA ordinal `ordinal`: its UUID (NUL-terminated, at
     * most CC_PORT_UUID_LEN bytes) and NVML handle (NULL without NVML).
     * 0, or -1 for an unknown ordinal (outputs untouched). May run device
     * discovery the first time (driver calls; needs cuInit done). */
    int (*device_info)(int ordinal, char uuid[CC_PORT_UUID_LEN], nvmlDevice_t *nvml);
    /* The card's total memory and whether it has concurrent managed access
     * (CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS): 0, or -1 when the
     * driver cannot tell (outputs untouched). For oversubscription, at bind. */
    int (*device_memory)(int ordinal, uint64_t *total, int *concurrent_managed);

    /* --- this process (compute_setup.c, watcher.c). */
    /* The host pid as NVML reports it when already known, else 0. A load.
     * A fork child starts at 0 (the hook layer resets its own state; the
     * cap's modules register their resets directly: common/fork.h). */
    uint32_t (*host_pid_known)(void);
    /* The host pid, discovering it when unknown (a /proc read and one NVML
     * call on device `ordinal`); 0 while ambiguous: the caller retries later.
     * Not for the launch path. When found, the hook layer tells the cap
     * through cc_compute_note_host_pid (compute.h). */
    uint32_t (*host_pid_discover)(int ordinal);
} cc_port_t;

extern const cc_port_t *cc_port_installed; /* cc_port() */
extern const cc_port_t cc_port_default;

/* The installed port, never NULL (cc_port_default before an install). */
static inline const cc_port_t *cc_port(void)
{
    return __atomic_load_n(&cc_port_installed, __ATOMIC_ACQUIRE);
}

/* Installs p (every entry non-NULL, p lives for the process) once: 0, or -1
 * when a port other than the default is installed already (unchanged). */
int cc_port_install(const cc_port_t *p);

#endif
