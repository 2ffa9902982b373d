/* What the simulator's NVML files share (nvml.c, nvml_procs.c). */
#ifndef SIM_NVML_INTERNAL_H
#define SIM_NVML_INTERNAL_H

#include "cudacap/nvml_api.h"

/* NVML initialised (nvmlInit called more often than nvmlShutdown). */
int sim_nvml_ready(void);
/* The simulator's device index of handle d, or -1 for a bad handle. */
int sim_nvml_dev_of(nvmlDevice_t d);

#define CHECK_INIT() do { if (!sim_nvml_ready()) return NVML_ERROR_UNINITIALIZED; } while (0)
#define dev_of(d) sim_nvml_dev_of(d)

#endif
