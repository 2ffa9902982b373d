/* The cap options that write a container's limits file (cap/limits.h):
 * --mem SIZE, --mem-<i> SIZE, --sm PCT, --sm-<i> PCT, --sm-soft PCT,
 * --sm-soft-<i> PCT, --mem-oversubscribe SIZE, --mem-oversubscribe-<i> SIZE;
 * and the file's atomic write (a temporary file renamed
 * over it, so a reader sees the old file or the new one, whole). */
#ifndef CC_CLI_LIMITS_CLI_H
#define CC_CLI_LIMITS_CLI_H

#include "cap/limits.h"

struct cli_limits {
    cc_limits_t lim;
    const char *mem, *sm, *soft; /* the all-device values as given; NULL: not given */
    int any;                     /* any cap option given */
    int per_dev;                 /* a --*-<i> option given */
};

/* argv[*i] is a cap option: parsed into l (a bad value is a usage error
 * naming the flag), *i advanced past its value; 1. Otherwise 0. */
int cli_limits_opt(int argc, char **argv, int *i, struct cli_limits *l);
/* Usage error, naming the flag, for caps no device can have together. */
void cli_limits_check(const struct cli_limits *l);
/* Writes l as dfd's limits file (dir: for messages), atomically: 0, or 1
 * after a message. */
int cli_limits_write(int dfd, const char *dir, const cc_limits_t *l);
/* The limits folder of the state folder open at dfd (dir: for messages),
 * created (0755) when missing, never replaced: its descriptor, or -1 after
 * a message. */
int cli_limits_dir(int dfd, const char *dir);
/* Reads dir's limits file: 1 read, 0 none, -1 bad (said). */
int cli_limits_load(int dfd, const char *dir, cc_limits_t *out);

#endif
