/* Plausibility of a region copy that passed its header check: every field
 * the command shows must hold a value the library could have written (the
 * region headers in include/cudacap, src/cap/mem/ and compute_region.c),
 * and the bytes the layout does not use must be zero, as every build leaves
 * them. A copy that fails is garbage and is shown as "corrupt", never as
 * figures. */
#ifndef CC_CLI_VALIDATE_H
#define CC_CLI_VALIDATE_H

#include <stddef.h>

/* NULL when plausible; else a description of the first bad field (in buf). */
const char *snap_check_mem(const void *region, char *buf, size_t len);
const char *snap_check_compute(const void *region, char *buf, size_t len);

#endif
