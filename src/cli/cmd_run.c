/* cudacap run: a program capped exactly as a container would be: the same
 * environment, the library preloaded, a prepared state folder. cudacap
 * stays as the parent: it forwards signals, passes the exit status through,
 * and removes the state folder it made. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/limits_cli.h"
#include "cli/liveness.h"

static void usage(FILE *f)
{
    fputs("usage: cudacap run [--mem SIZE [--mem-oversubscribe SIZE]]\n"
          "                   [--sm PCT [--sm-soft PCT] [--sm-burst MS]]\n"
          "                   [--devices LIST]\n"
          "                   [--state DIR] [--root ROOT] [--name NAME] [--lib PATH] [--keep]\n"
          "                   -- CMD [ARG...]\n"
          "\n"
          "Runs CMD capped as a container would be: sets CUDACAP_MEM_LIMIT,\n"
          "CUDACAP_SM_LIMIT, CUDACAP_STATE_DIR and CUDA_VISIBLE_DEVICES, preloads\n"
          "libcudacap.so (LD_PRELOAD, before any existing entries), and waits for CMD.\n"
          "CMD's exit status passes through; a CMD killed by a signal kills cudacap with\n"
          "the same signal (exit status 128+N in a shell). CMD runs in a process group\n"
          "of its own; SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 sent to\n"
          "cudacap are forwarded to that whole group (a script's background workers too).\n"
          "\n"
          "  --mem SIZE      memory cap per device (4g, 512m, 1048576)\n"
          "  --mem-oversubscribe SIZE\n"
          "                  CUDACAP_MEM_OVERSUBSCRIBE: up to SIZE more beyond the cap, served\n"
          "                  from host memory (docs/memory.md, \"Oversubscription\")\n"
          "  --sm PCT        SM utilization cap in percent, 1..100\n"
          "  --sm-soft PCT   elastic limit (CUDACAP_SM_SOFT_LIMIT): idle device time may be\n"
          "                  used up to PCT; --sm stays guaranteed (docs/compute.md)\n"
          "  --sm-burst MS   CUDACAP_SM_BURST_MS, 1..1000: the most device time the container\n"
          "                  may run ahead of its share, and the largest lump its processes\n"
          "                  are paid in (docs/compute.md, \"Pacing\")\n"
          "  --devices LIST  CUDA_VISIBLE_DEVICES: indices or GPU-/MIG- UUIDs, comma-separated\n"
          "  --state DIR     the container's state folder; processes run with the same DIR\n"
          "                  share one cap. Prepared (created or emptied) unless a process\n"
          "                  still uses it, in which case CMD joins that container.\n"
          "  --name NAME     without --state: the folder ROOT/NAME (default CMD-<pid>),\n"
          "                  created for this run and removed after it (unless --keep)\n"
          "  --root ROOT     as for cudacap status\n"
          "  --lib PATH      the library (default: ../lib/libcudacap.so next to this\n"
          "                  binary, else " CLI_INSTALLED_LIB ")\n"
          "  --keep          keep the state folder made for this run\n",
          f);
}

static pid_t child;

/* Forwards a signal to CMD's whole process group, so the background
 * workers of a shell script get it too (a SIGTERM that killed only `bash -c`
 * left its workers running, capped and orphaned). CMD leads its own group:
 * a terminal's signals reach it directly only when it has the terminal
 * (tcsetpgrp below); otherwise they reach us, and we pass them on. */
static void forward(int sig, siginfo_t *si, void *uc)
{
    (void)si, (void)uc;
    if (child > 0 && kill(-child, sig) != 0) kill(child, sig);
}

static const int fwd_sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
#define NFWD ((int)(sizeof fwd_sigs / sizeof fwd_sigs[0]))

/* LD_PRELOAD with lib first, except a sanitizer runtime, which must stay
 * the first object loaded. An entry already naming lib is not repeated. */
static int set_preload(const char *lib)
{
    const char *old = getenv("LD_PRELOAD");
    size_t cap = strlen(lib) + (old ? strlen(old) : 0) + 4;
    char *san = calloc(1, cap), *rest = calloc(1, cap), *copy = strdup(old ? old : "");
    if (!san || !rest || !copy) return -1;
    for (char *save, *t = strtok_r(copy, ": ", &save); t; t = strtok_r(NULL, ": ", &save)) {
        if (!strcmp(t, lib)) continue;
        const char *base = strrchr(t, '/') ? strrchr(t, '/') + 1 : t;
        char *dst = !strncmp(base, "libasan", 7) || !strncmp(base, "libtsan", 7) ||
                            !strncmp(base, "libubsan", 8)
                        ? san
                        : rest;
        if (*dst) strcat(dst, ":");
        strcat(dst, t);
    }
    char *val = malloc(cap + 2);
    if (!val) return -1;
    snprintf(val, cap + 2, "%s%s%s%s%s", san, *san ? ":" : "", lib, *rest ? ":" : "", rest);
    int r = setenv("LD_PRELOAD", val, 1);
    free(san), free(rest), free(copy), free(val);
    return r;
}

static void sanitize_name(char *s)
{
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '-' || *s == '_' || *s == '.'))
            *s = '_';
}

int cmd_run(int argc, char **argv)
{
    const char *mem = NULL, *over = NULL, *sm = NULL, *soft = NULL, *burst = NULL, *devices = NULL, *state = NULL, *root_opt = NULL,
               *name = NULL, *lib_opt = NULL, *v;
    int keep = 0, i;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--")) {
            i++;
            break;
        }
        if (cli_is_help(argv[i])) return usage(stdout), 0;
        else if (cli_opt_val(argc, argv, &i, "--mem", &v)) mem = v;
        else if (cli_opt_val(argc, argv, &i, "--mem-oversubscribe", &v)) over = v;
        else if (cli_opt_val(argc, argv, &i, "--sm", &v)) sm = v;
        else if (cli_opt_val(argc, argv, &i, "--sm-soft", &v)) soft = v;
        else if (cli_opt_val(argc, argv, &i, "--sm-burst", &v)) burst = v;
        else if (cli_opt_val(argc, argv, &i, "--devices", &v)) devices = v;
        else if (cli_opt_val(argc, argv, &i, "--state", &v)) state = v;
        else if (cli_opt_val(argc, argv, &i, "--root", &v)) root_opt = v;
        else if (cli_opt_val(argc, argv, &i, "--name", &v)) name = v;
        else if (cli_opt_val(argc, argv, &i, "--lib", &v)) lib_opt = v;
        else if (cli_opt_flag(argv, i, "--keep")) keep = 1;
        else if (argv[i][0] == '-') cli_usage_error("unknown option %s (put CMD after --)", argv[i]);
        else break; /* CMD starts here */
    }
    if (i >= argc) cli_usage_error("missing CMD (cudacap run [options] -- CMD [ARG...])");
    char **cmd = argv + i;
    if (mem) cli_parse_size("--mem", mem);
    if (over) cli_parse_size("--mem-oversubscribe", over);
    if (over && !mem) cli_usage_error("--mem-oversubscribe: memory beyond a cap needs --mem");
    cli_check_sm(sm, soft);
    cli_check_burst(sm, burst);
    if (devices) cli_check_devices("--devices", devices);
    if (state && !*state) cli_usage_error("--state: empty path");
    if (state && name) cli_usage_error("--name names the folder made under ROOT; not with --state");
    if (name) {
        if (!*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
            cli_usage_error("--name: \"%s\" is not a folder name", name);
    }

    char lib[2 * PATH_MAX];
    if (cli_find_library(lib_opt, lib, sizeof lib) != 0) {
        cli_err("cannot find libcudacap.so (tried %s)%s", lib, lib_opt ? "" : "; pass --lib PATH");
        return 1;
    }

    /* The state folder. */
    char dir[PATH_MAX];
    int made = 0, fresh = 0, dfd = -1;
    if (state) {
        snprintf(dir, sizeof dir, "%s", state);
        struct stat st;
        if (lstat(dir, &st) != 0 && cli_prepare_dir(dir, 0700, -1, -1) != 0) return 1;
        /* Several runs may start on one folder at once: the exclusive flock
         * serialises check-and-prepare, and each run then holds a shared one
         * while CMD lives, which a later prepare (exclusive) cannot get. */
        char canon[PATH_MAX];
        dfd = cli_open_state_dir(dir, 0, 0700, canon, sizeof canon); /* no links, as prepare */
        if (dfd < 0) return 1;
        long pids[1];
        /* Exclusive fails: another run's CMD lives (shared) or another run
         * is preparing (exclusive, briefly): join without preparing. */
        if (flock(dfd, LOCK_EX | LOCK_NB) == 0 && live_users(dfd, pids, 1) == 0) {
            /* fresh: pre-start cleanup */
            if (cli_prepare_at(dfd, canon, 0700, -1, -1) == 1) return 1;
            fresh = 1;
        }
        while (flock(dfd, LOCK_SH) != 0 && errno == EINTR) {}
    } else {
        const char *root = cli_default_root(root_opt);
        char nm[256];
        if (name) snprintf(nm, sizeof nm, "%s", name);
        else {
            const char *b = strrchr(cmd[0], '/') ? strrchr(cmd[0], '/') + 1 : cmd[0];
            snprintf(nm, sizeof nm, "%.200s-%ld", *b ? b : "cmd", (long)getpid());
        }
        sanitize_name(nm);
        if (cli_mkdirs(root, 0711) != 0) {
            cli_err("cannot create %s: %s (pass --state DIR or --root ROOT)", root, strerror(errno));
            return 1;
        }
        snprintf(dir, sizeof dir, "%s/%s", root, nm);
        if (mkdir(dir, 0700) != 0) {
            cli_err("cannot create %s: %s%s", dir, strerror(errno),
                    errno == EEXIST ? " (another run uses that name; pick another --name)" : "");
            return 1;
        }
        made = fresh = 1;
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd >= 0) flock(dfd, LOCK_SH);
    }
    char *abs = realpath(dir, NULL);
    if (!abs) {
        cli_err("cannot resolve %s: %s", dir, strerror(errno));
        return 1;
    }

    /* As root, a folder this run prepared gets the limits file: CMD's
     * processes cannot raise their caps through their environment. (Not
     * as another user: the file would be the container's own to rewrite.
     * Not on a folder another run uses: that one's caps stay.) */
    if (fresh && dfd >= 0 && geteuid() == 0 && (mem || sm)) {
        cc_limits_t l = {.generation = 1};
        if (mem) l.mem_all = cli_parse_size("--mem", mem);
        if (over) l.over_all = cli_parse_size("--mem-oversubscribe", over), l.over_set_all = 1;
        if (sm) l.sm_all = cli_parse_pct("--sm", sm, 1, 100);
        if (soft) l.soft_all = cli_parse_pct("--sm-soft", soft, 1, 100);
        if ((l.mem_all || l.sm_all) && cli_limits_write(dfd, abs, &l) != 0) return 1;
    }
    if (mem) setenv("CUDACAP_MEM_LIMIT", mem, 1);
    if (over) setenv("CUDACAP_MEM_OVERSUBSCRIBE", over, 1);
    if (sm) setenv("CUDACAP_SM_LIMIT", sm, 1);
    if (soft) setenv("CUDACAP_SM_SOFT_LIMIT", soft, 1);
    if (burst) setenv("CUDACAP_SM_BURST_MS", burst, 1);
    if (devices) setenv("CUDA_VISIBLE_DEVICES", devices, 1);
    setenv("CUDACAP_STATE_DIR", abs, 1);
    if (set_preload(lib) != 0) {
        cli_err("out of memory");
        return 1;
    }

    /* Forwarding is installed before the fork: a signal arriving between
     * fork and the handler must not kill us and orphan CMD. Blocked across
     * the fork so the child starts with default dispositions first. */
    sigset_t all, old;
    sigemptyset(&all);
    for (int k = 0; k < NFWD; k++) sigaddset(&all, fwd_sigs[k]);
    sigprocmask(SIG_BLOCK, &all, &old);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = forward;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigfillset(&sa.sa_mask);
    for (int k = 0; k < NFWD; k++) sigaction(fwd_sigs[k], &sa, NULL);

    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) != 0) {
        cli_err("pipe: %s", strerror(errno));
        return 1;
    }
    /* In the terminal's foreground, hand the terminal to CMD's group (as a
     * shell does: in both processes, so CMD never reads it from the
     * background), so it can read it and gets Ctrl-C itself; taken back after. */
    int tty = -1;
    if (isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp()) tty = STDIN_FILENO;
    if (tty >= 0) signal(SIGTTOU, SIG_IGN);
    child = fork();
    if (child < 0) {
        cli_err("fork: %s", strerror(errno));
        return 1;
    }
    if (child == 0) {
        setpgid(0, 0);
        if (tty >= 0) tcsetpgrp(tty, getpid());
        signal(SIGTTOU, SIG_DFL);
        for (int k = 0; k < NFWD; k++) signal(fwd_sigs[k], SIG_DFL);
        sigprocmask(SIG_SETMASK, &old, NULL);
        close(pfd[0]);
        execvp(cmd[0], cmd);
        int e = errno;
        ssize_t w = write(pfd[1], &e, sizeof e);
        (void)w;
        _exit(127);
    }
    close(pfd[1]);
    setpgid(child, child); /* also here: whichever runs first, the group exists before a signal */
    if (tty >= 0) tcsetpgrp(tty, child);
    sigprocmask(SIG_SETMASK, &old, NULL);
    int e = 0;
    ssize_t got;
    do got = read(pfd[0], &e, sizeof e);
    while (got < 0 && errno == EINTR);
    close(pfd[0]);
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
    if (tty >= 0) tcsetpgrp(tty, getpgrp());
    int rc;
    if (got == (ssize_t)sizeof e) {
        cli_err("cannot run %s: %s", cmd[0], strerror(e));
        rc = e == ENOENT ? 127 : 126;
    } else if (WIFEXITED(status)) {
        rc = WEXITSTATUS(status);
    } else {
        rc = 128 + WTERMSIG(status);
    }
    if (dfd >= 0) close(dfd); /* drops the shared flock */
    if (made && !keep) {
        long pids[1];
        if (snap_live_pids(abs, pids, 1) > 0)
            cli_err("leaving %s: a process started by %s still uses it", abs, cmd[0]);
        else
            cli_remove_tree(abs);
    }
    free(abs);
    if (got != (ssize_t)sizeof e && WIFSIGNALED(status)) {
        /* Die the same way, so our parent sees what killed CMD; no core of
         * our own (CMD's is the one that matters). */
        int sig = WTERMSIG(status);
        struct rlimit nocore = {0, 0};
        setrlimit(RLIMIT_CORE, &nocore);
        signal(sig, SIG_DFL);
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, sig);
        sigprocmask(SIG_UNBLOCK, &one, NULL);
        raise(sig);
    }
    return rc;
}
