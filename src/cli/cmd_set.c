/* cudacap set: a running container's caps changed (docs/cli.md, "set";
 * docs/configuration.md, "Changing caps while the container runs"). The
 * limits file is read, the flags given replace its values, the generation
 * goes up by one, and the file is replaced whole (a rename); then the
 * memory region's limits_gen word is bumped, which the container's
 * processes compare on their allocation path. The compute watcher of each
 * capped process also looks at the file once a period. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/gpu_info.h"
#include "cli/limits_cli.h"
#include "cudacap/abi_mem_region.h"

static void usage(FILE *f)
{
    fputs("usage: cudacap set [--mem SIZE] [--mem-<i> SIZE] [--sm PCT] [--sm-<i> PCT]\n"
          "                   [--sm-soft PCT] [--sm-soft-<i> PCT]\n"
          "                   [--mem-oversubscribe SIZE] [--mem-oversubscribe-<i> SIZE]\n"
          "                   [--dry-run] DIR\n"
          "\n"
          "Changes the caps of the container whose state folder is DIR while it runs:\n"
          "rewrites DIR/limits.d/limits (the next generation, replaced whole) and tells the\n"
          "container's processes. Memory takes effect at their next allocation (a cap\n"
          "lowered below what they hold refuses new allocations until frees bring the\n"
          "container under it; nothing is taken back), SM caps within one period\n"
          "(100 ms). Prints what changed.\n"
          "\n"
          "  --mem SIZE         memory cap of every device (drops per-device --mem-<i>\n"
          "                     values of the file); --mem-<i> for device i (0..15)\n"
          "  --sm PCT           SM cap 1..100 (100: none) of every device (drops the\n"
          "                     file's --sm-<i> values); --sm-<i> for device i\n"
          "  --sm-soft PCT      elastic limit, at least the SM cap (drops --sm-soft-<i>);\n"
          "                     --sm-soft-<i> for device i\n"
          "  --mem-oversubscribe SIZE\n"
          "                     memory beyond the cap served from host memory, every\n"
          "                     device (0: none; drops --mem-oversubscribe-<i>); the\n"
          "                     -<i> form for device i. A raise is checked by each\n"
          "                     process as at its start (managed access, the\n"
          "                     container's memory limit); a lowering refuses new host\n"
          "                     allocations until frees bring the container under it\n"
          "  --dry-run          print what would change, write nothing\n"
          "\n"
          "Values not given stay as the file has them. A memory cap larger than every\n"
          "device of this node (NVML) is refused, naming the flag. Without a limits file\n"
          "in DIR one is created: from then on the file, not the processes' environment,\n"
          "holds the container's caps.\n",
          f);
}

/* Merges the flags given (in `set`) into the file's limits (l). */
static void merge(cc_limits_t *l, const struct cli_limits *set)
{
    const cc_limits_t *s = &set->lim;
    if (set->mem) l->mem_all = s->mem_all, memset(l->mem_dev, 0, sizeof l->mem_dev);
    if (set->sm) l->sm_all = s->sm_all, memset(l->sm_dev, 0, sizeof l->sm_dev);
    if (set->soft) l->soft_all = s->soft_all, memset(l->soft_dev, 0, sizeof l->soft_dev);
    if (s->over_set_all) {
        l->over_all = s->over_all, l->over_set_all = 1;
        memset(l->over_dev, 0, sizeof l->over_dev), memset(l->over_set_dev, 0, sizeof l->over_set_dev);
    }
    for (int i = 0; i < CC_MAX_DEVICES; i++) {
        if (s->mem_dev[i]) l->mem_dev[i] = s->mem_dev[i];
        if (s->sm_dev[i]) l->sm_dev[i] = s->sm_dev[i];
        if (s->soft_dev[i]) l->soft_dev[i] = s->soft_dev[i];
        if (s->over_set_dev[i]) l->over_dev[i] = s->over_dev[i], l->over_set_dev[i] = 1;
    }
}

static const char *bytes_or_none(uint64_t v, char *b, size_t n) { return v ? cli_bytes(v, b, n) : "none"; }

static const char *pct_or_none(uint32_t v, char *b, size_t n)
{
    if (v) snprintf(b, n, "%u%%", v);
    else snprintf(b, n, "none");
    return b;
}

/* One cap's change over the devices (a: before, b: after; bytes when
 * bytes, else percent, 0 none): said once as "every device" when every
 * device changed alike, else per device. The number of lines printed. */
static int say_one(const char *what, const uint64_t *a, const uint64_t *b, int bytes)
{
    int first = -1, alike = 1, n = 0;
    for (int i = 0; i < CC_MAX_DEVICES; i++) {
        if (a[i] == b[i]) alike = 0;
        else if (first < 0) first = i;
        else if (a[i] != a[first] || b[i] != b[first]) alike = 0;
    }
    for (int i = first; first >= 0 && i < CC_MAX_DEVICES; i++) {
        if (a[i] == b[i] || (alike && i != first)) continue;
        char x[32], y[32], where[32];
        if (alike) snprintf(where, sizeof where, "every device");
        else snprintf(where, sizeof where, "device %d", i);
        printf("%s: %s %s -> %s\n", where, what,
               bytes ? bytes_or_none(a[i], x, sizeof x) : pct_or_none((uint32_t)a[i], x, sizeof x),
               bytes ? bytes_or_none(b[i], y, sizeof y) : pct_or_none((uint32_t)b[i], y, sizeof y));
        n++;
    }
    return n;
}

/* Prints each cap's change between the files' effective caps. The number
 * of changes. */
static int say_changes(const cc_limits_t *a, const cc_limits_t *b)
{
    uint64_t ma[CC_MAX_DEVICES], mb[CC_MAX_DEVICES], x[2][2][CC_MAX_DEVICES], oa[CC_MAX_DEVICES],
        ob[CC_MAX_DEVICES];
    uint32_t sm[2][CC_MAX_DEVICES], soft[2][CC_MAX_DEVICES];
    cc_limits_effective(a, ma, sm[0], soft[0]);
    cc_limits_effective(b, mb, sm[1], soft[1]);
    cc_limits_over_effective(a, oa);
    cc_limits_over_effective(b, ob);
    for (int w = 0; w < 2; w++)
        for (int i = 0; i < CC_MAX_DEVICES; i++) x[0][w][i] = sm[w][i], x[1][w][i] = soft[w][i];
    return say_one("memory cap", ma, mb, 1) + say_one("SM cap", x[0][0], x[0][1], 0) +
           say_one("SM elastic limit", x[1][0], x[1][1], 0) + say_one("oversubscription", oa, ob, 1);
}

/* No memory cap above the largest device of this node (when NVML says). */
static void check_devices(const struct cli_limits *set)
{
    uint64_t largest;
    unsigned count;
    if (!gpu_mem_largest(&largest, &count)) {
        fprintf(stderr, "cudacap set: NVML is not available here: memory caps not checked against "
                        "the devices\n");
        return;
    }
    char a[32], b[32];
    const cc_limits_t *s = &set->lim;
    if (set->mem && s->mem_all > largest)
        cli_usage_error("--mem %s: larger than every device of this node (the largest has %s)",
                        cli_bytes(s->mem_all, a, sizeof a), cli_bytes(largest, b, sizeof b));
    for (int i = 0; i < CC_MAX_DEVICES; i++)
        if (s->mem_dev[i] > largest)
            cli_usage_error("--mem-%d %s: larger than every device of this node (the largest has %s)", i,
                            cli_bytes(s->mem_dev[i], a, sizeof a), cli_bytes(largest, b, sizeof b));
}

/* Bumps memory.region's limits_gen, when there is a region: never through a
 * link, never waiting on a FIFO, only a file of the region's size with its
 * magic (anything else is left alone: the processes' watchers still see
 * the file within a period). */
static void tell_processes(int dfd)
{
    int fd = openat(dfd, CC_MEM_REGION_FILE, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= (off_t)CC_MEM_FILE_SIZE) {
        cc_mem_region_t *r = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (r != MAP_FAILED) {
            if (__atomic_load_n(&r->hdr.magic, __ATOMIC_RELAXED) == CC_MEM_MAGIC)
                __atomic_add_fetch(&r->limits_gen, 1, __ATOMIC_RELEASE);
            munmap(r, 4096);
        }
    }
    close(fd);
}

int cmd_set(int argc, char **argv)
{
    const char *dir = NULL;
    int dry = 0;
    struct cli_limits set = {0};
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) return usage(stdout), 0;
        else if (cli_limits_opt(argc, argv, &i, &set)) continue;
        else if (cli_opt_flag(argv, i, "--dry-run")) dry = 1;
        else if (argv[i][0] == '-' && argv[i][1]) cli_usage_error("unknown option %s", argv[i]);
        else if (dir) cli_usage_error("unexpected argument \"%s\" (one DIR only)", argv[i]);
        else dir = argv[i];
    }
    if (!dir) cli_usage_error("missing DIR (the container's state folder)");
    if (!set.any)
        cli_usage_error("nothing to set: give --mem, --sm, --sm-soft or --mem-oversubscribe (or their -<i> forms)");
    if (set.mem && !set.lim.mem_all) cli_usage_error("--mem: 0 is no cap; a memory cap cannot be removed "
                                                     "while the container runs (give a larger one)");
    check_devices(&set);
    char canon[PATH_MAX];
    int dfd = cli_open_state_dir(dir, 0, 0700, canon, sizeof canon);
    if (dfd < 0) return 1;
    cc_limits_t old, now;
    int rc = cli_limits_load(dfd, canon, &old);
    if (rc < 0) {
        cli_err("not changed: the limits file above cannot be trusted; write it anew with "
                "'cudacap prepare' (before the container starts) or fix it by hand");
        close(dfd);
        return 1;
    }
    if (rc == 0) {
        memset(&old, 0, sizeof old);
        printf("%s has no limits file: creating one (the container's caps now come from it, not "
               "from its processes' environment)\n", canon);
    }
    now = old;
    merge(&now, &set);
    /* The merged file must be one the library accepts (a soft limit below a
     * hard one that only the merge made, say): the same checks as prepare's,
     * on the result. */
    struct cli_limits whole = {.lim = now, .any = 1};
    cli_limits_check(&whole);
    int n = say_changes(&old, &now);
    if (!n && rc > 0) {
        printf("nothing changed (generation %" PRIu64 ")\n", old.generation);
        close(dfd);
        return 0;
    }
    now.generation = old.generation + 1;
    if (dry) {
        printf("dry run: generation %" PRIu64 " not written\n", now.generation);
        close(dfd);
        return 0;
    }
    if (cli_limits_write(dfd, canon, &now) != 0) {
        close(dfd);
        return 1;
    }
    tell_processes(dfd);
    printf("%s/" CC_LIMITS_FILE ": generation %" PRIu64 " -> %" PRIu64 "\n", canon, old.generation, now.generation);
    close(dfd);
    return 0;
}
