/* Process-level services shared by the hook families: configuration, fork
 * handling, call statistics. */
#ifndef CC_PROCESS_H
#define CC_PROCESS_H

#include "cap/cfg.h" /* cc_cfg: the cap layer's, loaded once by cc_process_init() */
#include "common/fork.h" /* fork children: each module registers its own reset */

void cc_stats_register_exit_report(void);

#endif
