/* Shared pieces of the cudacap command: argument helpers, paths, exit
 * codes. Each subcommand lives in its own cmd_<name>.c. */
#ifndef CC_CLI_H
#define CC_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CLI_EXIT_USAGE 2 /* any bad argument: one line naming it */

/* The subcommand being run, for messages ("cudacap status: ..."). */
extern const char *cli_cmd;

/* Prints "cudacap <cmd>: <message>" and "see 'cudacap <cmd> --help'" on
 * stderr and exits with CLI_EXIT_USAGE. */
void cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* Prints "cudacap <cmd>: <message>" on stderr. */
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Option matching at argv[*i]: "--name VALUE" or "--name=VALUE". Returns 1
 * and sets *val (advancing *i past a separate value) when argv[*i] is the
 * option; a missing value is a usage error. */
int cli_opt_val(int argc, char **argv, int *i, const char *name, const char **val);
/* A flag without a value ("--json"); "--json=..." is a usage error. */
int cli_opt_flag(char **argv, int i, const char *name);
/* "-h" or "--help". */
int cli_is_help(const char *a);

/* Value parsers that exit with a usage error naming the option. */
uint64_t cli_parse_size(const char *opt, const char *v);
uint32_t cli_parse_pct(const char *opt, const char *v, uint32_t lo, uint32_t hi);
/* --sm and --sm-soft (either may be NULL): each a percentage, the soft
 * limit only beside a hard one and at least it. */
void cli_check_sm(const char *sm, const char *soft);
/* --sm-burst (may be NULL): milliseconds as CUDACAP_SM_BURST_MS takes them,
 * only beside --sm. */
void cli_check_burst(const char *sm, const char *burst);
double cli_parse_seconds(const char *opt, const char *v, double lo, double hi);
long cli_parse_long(const char *opt, const char *v, long lo, long hi);
/* A CUDA_VISIBLE_DEVICES value: comma-separated indices or GPU-/MIG- UUIDs. */
void cli_check_devices(const char *opt, const char *v);

/* The ROOT folder of container state folders: opt if set, else
 * $CUDACAP_ROOT, else /var/lib/cudacap/containers for root and
 * /tmp/cudacap-<uid>/containers for anyone else. Returns a static buffer. */
const char *cli_default_root(const char *opt);
/* The same from a positional ROOT or --root (both given: usage error). */
const char *cli_root_arg(const char *pos, const char *opt);
/* An argument no option took: an unknown option, a second ROOT (usage
 * errors), or the positional ROOT (*pos). */
void cli_root_positional(const char *a, const char **pos);

/* The interposer: opt if set, else <dir of this binary>/CLI_REL_LIBDIR
 * (the installed tree, e.g. ../lib/x86_64-linux-gnu/cudacap), else
 * <dir>/../lib/libcudacap.so (the build tree), else CLI_INSTALLED_LIB,
 * /usr/lib/<multiarch>/cudacap, /usr/lib/cudacap. The folder is resolved,
 * the file name kept (the plain-name link). Returns 0 and fills buf with an
 * absolute path, or -1 (buf holds the paths tried, for the message). */
#define CLI_INSTALLED_LIB "/usr/local/lib/cudacap/libcudacap.so"
int cli_find_library(const char *opt, char *buf, size_t len);

/* Creates dir and its missing parents (mode for each one created). */
int cli_mkdirs(const char *dir, unsigned mode);

/* Human-readable bytes ("1.50 GiB") into buf. */
const char *cli_bytes(uint64_t b, char *buf, size_t len);

/* Creates or empties a container's state folder (cudacap prepare): refuses
 * (returns 3 after a message) when a process may still use it. mode: of the
 * folder; uid/gid: owner of the folder and the lock file (-1: leave). 0 on
 * success, 1 after a message on failure. */
#define CLI_PREPARE_BUSY 3
int cli_prepare_dir(const char *dir, unsigned mode, long uid, long gid);
/* The same on the folder open at dfd (dir: its name, for messages). */
int cli_prepare_at(int dfd, const char *dir, unsigned mode, long uid, long gid);
extern int cli_prepare_force; /* empty foreign files too (of a state folder only) */

/* dir made absolute (against the working folder) with "", "." and ".."
 * components resolved lexically (exact for a path without links, the only
 * kind cli_open_state_dir accepts). 0, or -1 with errno. */
int cli_canon_path(const char *dir, char *out, size_t len);
/* canon when it is /, a system folder (/etc, /usr, /lib*, /var, /home, ...)
 * itself, else NULL. */
const char *cli_system_folder(const char *canon);
/* Opens dir (O_DIRECTORY) walking from / one component at a time with
 * O_NOFOLLOW; create: missing components are made (0711, the last one
 * mode). canon gets the resolved path. Returns the descriptor, or -1 after
 * a message naming the component at fault (a link, not a folder). */
int cli_open_state_dir(const char *dir, int create, unsigned mode, char *canon, size_t len);
/* Removes dir and everything in it (no symlink is followed). */
int cli_remove_tree(const char *dir);

/* Subcommands: each returns the process exit status. */
int cmd_run(int argc, char **argv);
int cmd_set(int argc, char **argv);
int cmd_prepare(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_metrics(int argc, char **argv);
int cmd_cdi(int argc, char **argv);
int cmd_doctor(int argc, char **argv);

#endif
