/* Process-level services shared by the hook families: configuration, fork
 * handling, call statistics. */
#ifndef CC_PROCESS_H
#define CC_PROCESS_H

#include "cap/cfg.h" /* cc_cfg: the cap layer's, loaded once by cc_process_init() */

/* Subsystems that keep per-process state register a reset for fork children
 * (up to 16, registered during init; run in registration order). */
void cc_fork_child_register(void (*fn)(void));
void cc_fork_child_run(void);

void cc_stats_register_exit_report(void);

#endif
