/* A scripted port (src/cap/port.h) for policy unit tests linking
 * libcudacap_core: no driver, no NVML, no hook layer. */
#ifndef CC_TEST_FAKE_PORT_H
#define CC_TEST_FAKE_PORT_H

#include "cap/port.h"

struct fake_port_script {
    CUstreamCaptureStatus capture, capture_ptsz; /* what is_capturing(_ptsz) reports */
    float elapsed_ms;                            /* every timing */
    int events_made, events_destroyed, records, exchanges, queries;
    int not_ready;                               /* the next this many queries: not ready */
    CUstreamCaptureMode mode;                    /* the thread's mode, as exchanged */
    /* Memory policy (cap/mem): */
    int no_current;         /* device_current fails (-1) */
    uint32_t host_pid;      /* host_pid_discover's answer (0: unknown) */
    int proc_mem_known;     /* nvml_process_memory answers */
    uint64_t proc_mem;      /* ... with this many bytes */
    int refreshes;          /* mem_refresh_own calls */
    void (*on_refresh)(void); /* run by each (may be NULL) */
};
extern struct fake_port_script fake;

/* Installs the fake port (once per process; later calls do nothing). */
void fake_port_install(void);

#endif
