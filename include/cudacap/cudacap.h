/* Introspection entry points exported by libcudacap.so, for tests and tools.
 * A program finds them with dlsym(RTLD_DEFAULT, ...) so it still runs when
 * the library is not preloaded. */
#ifndef CUDACAP_H
#define CUDACAP_H

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version string, e.g. "0.1.0". */
const char *cudacap_version(void);

/* Calls that went through cudacap's wrapper of the exported symbol NAME
 * (e.g. "cuLaunchKernel_ptsz") since the process started; -1 when NAME is not
 * intercepted. Counting is on only with CUDACAP_COUNT_CALLS=1 (otherwise 0),
 * which also prints every non-zero count to stderr at exit. */
long long cudacap_call_count(const char *name);

/* Host time, in nanoseconds, that launches spent in the compute cap's gate
 * since the process started (admission, waits for tokens or a pending
 * timing, timing events), and through *launches (if not NULL) how many
 * launches went through it. Measured only with CUDACAP_COUNT_CALLS=1
 * (otherwise 0 and 0), at two clock reads a launch, which the figure
 * includes. A launch-bound program's throughput under a cap it never
 * reaches is at least 1 / (1 + gate time / its own time). */
long long cudacap_gate_ns(long long *launches);

#ifdef __cplusplus
}
#endif
#endif
