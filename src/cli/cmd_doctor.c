/* cudacap doctor: the one subcommand that loads the driver (dlopen). Checks,
 * each with a plain verdict: the library loads; the driver and NVML load and
 * answer; the state folder is writable and lockable; and, in a child started
 * the way a capped program is (LD_PRELOAD), that dlsym on the driver and
 * cuGetProcAddress hand out cudacap's wrappers. */
#include <cuda.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "os/os.h"
#include "region/region.h"

static int failures;

static void verdict(int ok, const char *what, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void verdict(int ok, const char *what, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("[%s] %-10s ", ok ? " ok " : "FAIL", what);
    vprintf(fmt, ap);
    putchar('\n');
    va_end(ap);
    failures += !ok;
}

static void usage(FILE *f)
{
    fputs("usage: cudacap doctor [--lib PATH] [--state DIR]\n"
          "\n"
          "Checks that this node can cap programs: the library loads; libcuda.so.1 and\n"
          "libnvidia-ml.so.1 load and answer (cuInit, nvmlInit); the state folder is\n"
          "writable and lockable; and a program started with LD_PRELOAD gets cudacap's\n"
          "wrappers through dlsym and cuGetProcAddress. Exit status 0 when all pass,\n"
          "1 otherwise; each failure says what is wrong.\n"
          "\n"
          "  --lib PATH   the library to check (default: as for cudacap run)\n"
          "  --state DIR  the state folder to check (default: a temporary folder under ROOT)\n",
          f);
}

static const char *loaded_from(void *h, char *buf, size_t len)
{
    struct link_map *lm = NULL;
    if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && *lm->l_name)
        snprintf(buf, len, "%s", lm->l_name);
    else
        snprintf(buf, len, "?");
    return buf;
}

static void check_driver(void)
{
    char where[PATH_MAX];
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        verdict(0, "driver", "cannot load libcuda.so.1 (%s): no NVIDIA driver here, or it is not "
                             "on the loader path (ldconfig, LD_LIBRARY_PATH)", dlerror());
        return;
    }
    CUresult (*init)(unsigned) = (CUresult(*)(unsigned))dlsym(h, "cuInit");
    CUresult (*ver)(int *) = (CUresult(*)(int *))dlsym(h, "cuDriverGetVersion");
    CUresult (*cnt)(int *) = (CUresult(*)(int *))dlsym(h, "cuDeviceGetCount");
    if (!init || !ver || !cnt) {
        verdict(0, "driver", "%s lacks cuInit/cuDriverGetVersion/cuDeviceGetCount", loaded_from(h, where, sizeof where));
        return;
    }
    int v = 0, n = 0;
    CUresult r = init(0);
    if (r != CUDA_SUCCESS) {
        verdict(0, "driver", "%s: cuInit failed with %d (no device visible, or the driver and "
                             "kernel module disagree: check nvidia-smi)", loaded_from(h, where, sizeof where), (int)r);
        return;
    }
    ver(&v);
    cnt(&n);
    verdict(n > 0, "driver", "%s: CUDA %d.%d, %d device%s", loaded_from(h, where, sizeof where),
            v / 1000, (v % 1000) / 10, n, n == 1 ? "" : "s");
}

static void check_nvml(void)
{
    char where[PATH_MAX];
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        verdict(0, "nvml", "cannot load libnvidia-ml.so.1 (%s): the compute cap cannot measure "
                           "utilization", dlerror());
        return;
    }
    int (*init)(void) = (int (*)(void))dlsym(h, "nvmlInit_v2");
    int (*cnt)(unsigned *) = (int (*)(unsigned *))dlsym(h, "nvmlDeviceGetCount_v2");
    int (*fini)(void) = (int (*)(void))dlsym(h, "nvmlShutdown");
    if (!init || !cnt) {
        verdict(0, "nvml", "%s lacks nvmlInit_v2/nvmlDeviceGetCount_v2", loaded_from(h, where, sizeof where));
        return;
    }
    int r = init();
    unsigned n = 0;
    if (r == 0) r = cnt(&n);
    verdict(r == 0, "nvml", r == 0 ? "%s: %u device%s" : "%s: NVML call failed with %d",
            loaded_from(h, where, sizeof where), r == 0 ? n : (unsigned)r, n == 1 ? "" : "s");
    if (fini) fini();
}

static void check_state(const char *dir)
{
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/doctor.%ld.tmp", dir, (long)getpid());
    struct stat st;
    if (stat(dir, &st) != 0) {
        verdict(0, "state", "%s: %s", dir, strerror(errno));
        return;
    }
    int fd = open(p, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        verdict(0, "state", "%s is not writable (%s): processes would run without a shared cap",
                dir, strerror(errno));
        return;
    }
    int lk = cc_os_lock(fd, 0, 1, F_WRLCK, 0);
    close(fd);
    unlink(p);
    if (lk != 0) {
        verdict(0, "state", "%s: cannot lock a file there (%s): a network file system without "
                            "locks? use a local folder", dir, strerror(errno));
        return;
    }
    verdict(!(st.st_mode & 0002), "state", (st.st_mode & 0002)
                                               ? "%s is writable by everyone (mode %o): another user "
                                                 "could change this container's state"
                                               : "%s writable and lockable (mode %o)",
            dir, (unsigned)(st.st_mode & 07777));
}

/* In a child with LD_PRELOAD=lib: where the driver's entry points resolve. */
static int routing_child(const char *lib)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) return printf("cannot load libcuda.so.1\n"), 1;
    CUresult (*init)(unsigned) = (CUresult(*)(unsigned))dlsym(h, "cuInit");
    if (init) init(0);
    int bad = 0;
    Dl_info di;
    char *real = realpath(lib, NULL);
    void *f = dlsym(h, "cuMemAlloc_v2");
    if (!f || !dladdr(f, &di) || !real || !strstr(di.dli_fname, "libcudacap")) {
        printf("dlsym(libcuda, \"cuMemAlloc_v2\") resolves to %s, not the cudacap wrapper\n",
               f && dladdr(f, &di) ? di.dli_fname : "nothing");
        bad = 1;
    }
    typedef CUresult (*gpa_t)(const char *, void **, int, cuuint64_t, void *);
    typedef CUresult (*gpa1_t)(const char *, void **, int, cuuint64_t);
    gpa_t gpa = (gpa_t)dlsym(h, "cuGetProcAddress_v2");
    gpa1_t gpa1 = gpa ? NULL : (gpa1_t)dlsym(h, "cuGetProcAddress");
    if (!gpa && !gpa1) {
        printf("the driver exports no cuGetProcAddress\n");
        bad = 1;
    } else {
        const char *names[] = {"cuMemAlloc", "cuLaunchKernel", "cuMemGetInfo"};
        for (int i = 0; i < 3; i++) {
            void *pfn = NULL;
            int st = 0;
            CUresult r = gpa ? gpa(names[i], &pfn, 12000, 0, &st) : gpa1(names[i], &pfn, 12000, 0);
            if (r != CUDA_SUCCESS || !pfn || !dladdr(pfn, &di) || !strstr(di.dli_fname, "libcudacap")) {
                printf("cuGetProcAddress(\"%s\") returns %s (status %d), not the cudacap wrapper\n",
                       names[i], pfn && dladdr(pfn, &di) ? di.dli_fname : "nothing", (int)r);
                bad = 1;
            }
        }
    }
    free(real);
    return bad;
}

int cmd_doctor(int argc, char **argv)
{
    const char *lib_opt = NULL, *state = NULL, *v, *child_lib = NULL;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) return usage(stdout), 0;
        else if (cli_opt_val(argc, argv, &i, "--lib", &v)) lib_opt = v;
        else if (cli_opt_val(argc, argv, &i, "--state", &v)) state = v;
        else if (cli_opt_val(argc, argv, &i, "--routing-child", &v)) child_lib = v; /* internal */
        else if (argv[i][0] == '-') cli_usage_error("unknown option %s", argv[i]);
        else cli_usage_error("unexpected argument \"%s\"", argv[i]);
    }
    if (child_lib) return routing_child(child_lib);
    if (state && !*state) cli_usage_error("--state: empty path");

    char lib[2 * PATH_MAX];
    int have_lib = cli_find_library(lib_opt, lib, sizeof lib) == 0;
    if (!have_lib) {
        verdict(0, "library", "libcudacap.so not found (tried %s)", lib);
    } else {
        void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
        if (!h) verdict(0, "library", "%s does not load: %s", lib, dlerror()), have_lib = 0;
        else verdict(1, "library", "%s loads", lib);
    }
    check_driver();
    check_nvml();

    char tmpdir[PATH_MAX] = "";
    if (state) {
        check_state(state);
    } else {
        /* A throwaway folder under the root when the root exists; never the
         * root itself as a side effect (a check must not change the node:
         * status then listed an empty root that nothing had prepared).
         * Without a root, a temporary folder stands in for it. */
        const char *root = cli_default_root(NULL);
        struct stat rs;
        int made;
        if (stat(root, &rs) == 0 && S_ISDIR(rs.st_mode)) {
            snprintf(tmpdir, sizeof tmpdir, "%s/doctor-%ld", root, (long)getpid());
            made = mkdir(tmpdir, 0700) == 0;
        } else {
            const char *t = getenv("TMPDIR");
            snprintf(tmpdir, sizeof tmpdir, "%s/cudacap-doctor-XXXXXX", t && *t ? t : "/tmp");
            made = mkdtemp(tmpdir) != NULL;
        }
        if (!made) {
            verdict(0, "state", "cannot create a state folder %s: %s (pass --state DIR)", tmpdir,
                    strerror(errno));
            tmpdir[0] = 0;
        } else {
            check_state(tmpdir);
        }
    }

    if (have_lib) {
        /* A child started like a capped program: the preload is the test. */
        int pfd[2];
        char out[2048] = "";
        if (pipe2(pfd, O_CLOEXEC) == 0) {
            pid_t c = fork();
            if (c == 0) {
                dup2(pfd[1], 1);
                const char *old = getenv("LD_PRELOAD");
                char pre[3 * PATH_MAX];
                /* A sanitizer runtime already preloaded must stay first. */
                snprintf(pre, sizeof pre, "%s%s%s", old && strstr(old, "san") ? old : "",
                         old && strstr(old, "san") ? ":" : "", lib);
                setenv("LD_PRELOAD", pre, 1);
                if (tmpdir[0]) setenv("CUDACAP_STATE_DIR", tmpdir, 1);
                else if (state) setenv("CUDACAP_STATE_DIR", state, 1);
                execl("/proc/self/exe", "cudacap", "doctor", "--routing-child", lib, (char *)NULL);
                _exit(127);
            }
            close(pfd[1]);
            size_t got = 0;
            ssize_t r;
            while (got < sizeof out - 1 && (r = read(pfd[0], out + got, sizeof out - 1 - got)) > 0)
                got += (size_t)r;
            out[got] = 0;
            close(pfd[0]);
            int st = 0;
            while (c > 0 && waitpid(c, &st, 0) < 0 && errno == EINTR) {}
            int ok = c > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
            char *nl = strrchr(out, '\n');
            if (nl && nl[1] == 0) *nl = 0;
            verdict(ok, "routing", ok ? "dlsym and cuGetProcAddress hand out cudacap's wrappers"
                                      : "%s", out[0] ? out : "the check could not run");
        }
    }
    if (tmpdir[0]) cli_remove_tree(tmpdir);
    if (failures) printf("%d check%s failed\n", failures, failures == 1 ? "" : "s");
    else printf("all checks passed\n");
    return failures ? 1 : 0;
}
