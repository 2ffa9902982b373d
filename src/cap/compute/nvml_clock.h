/* What the watcher learns of NVML's per-process sampling on one device
 * (struct cc_nvml_clock, compute.h): its period, its publication lag, and
 * the rules built on them. Pure: no NVML, no clock reads; times are the
 * samples' own (CLOCK_REALTIME us). nvml_sample.c feeds and uses it;
 * tests/compute_period_unit.c drives it alone. */
#ifndef CC_CAP_NVML_CLOCK_H
#define CC_CAP_NVML_CLOCK_H

#include "cap/compute/compute.h"

/* The period: the least gap learned; 0 while unknown. */
unsigned cc_nvml_period_us(const struct cc_nvml_clock *c);
/* The period as the cheap path's grid step; 0 until two gaps agree. */
unsigned cc_nvml_grid_step_us(const struct cc_nvml_clock *c);
/* The publication lag: the least of the recent observations; 0 while
 * unknown (cc_nvml_lag_known says which). */
unsigned cc_nvml_lag_us(const struct cc_nvml_clock *c);
int cc_nvml_lag_known(const struct cc_nvml_clock *c);

/* A poll at now got an answer whose newest timestamp is newest, and whose
 * timestamps of one process lie step apart at the least (0: none). */
void cc_nvml_clock_saw(struct cc_nvml_clock *c, unsigned long long newest, unsigned long long step,
                       unsigned long long now);
/* The least gap between two timestamps of one process's samples among the
 * first 64 of n (0: none). */
unsigned long long cc_nvml_answer_step(const nvmlProcessUtilizationSample_t *b, unsigned n);

/* 1: NVML's next sample is not due at now (poll_gap: since the last poll),
 * asking would find nothing. */
int cc_nvml_not_due(const struct cc_nvml_clock *c, unsigned long long now, unsigned long long poll_gap);
/* lastSeen after an empty answer at now, from seen. */
unsigned long long cc_nvml_empty_seen(const struct cc_nvml_clock *c, unsigned long long seen,
                                      unsigned long long now);

#endif
