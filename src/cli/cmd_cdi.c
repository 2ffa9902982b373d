/* cudacap cdi: a CDI specification (Container Device Interface) for
 * runtimes that speak CDI (containerd, CRI-O, Podman), at the lowest
 * cdiVersion its content needs (cdi_min_version), so older runtimes accept
 * it. Each --name is a CDI device "<kind>=<name>" whose edits inject the library, the caps, and
 * that container's own state folder, emptied before every start by a
 * createRuntime hook running `cudacap prepare`. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/limits_cli.h"
#include "cli/render.h"

#define CTR_STATE "/var/run/cudacap"
#define CTR_LIB "/usr/local/lib/cudacap/libcudacap.so"
#define MAX_NAMES 64

static void usage(FILE *f)
{
    fputs("usage: cudacap cdi --name NAME [--name NAME...] [--mem SIZE] [--sm PCT]\n"
          "                   [--sm-soft PCT] [--root ROOT] [--lib PATH] [--kind VENDOR/CLASS] [--output FILE]\n"
          "\n"
          "Prints a CDI specification: one device per NAME (request it as\n"
          "KIND=NAME, e.g. --device cudacap.io/cap=job1), each injecting\n"
          "  LD_PRELOAD=" CTR_LIB " (the library, bind-mounted read-only),\n"
          "  CUDACAP_MEM_LIMIT / CUDACAP_SM_LIMIT / CUDACAP_SM_SOFT_LIMIT (when given),\n"
          "  CUDACAP_STATE_DIR=" CTR_STATE " (ROOT/NAME bind-mounted there, its\n"
          "  limits.d folder read-only over it), and\n"
          "  a createRuntime hook running 'cudacap prepare ROOT/NAME' before each start.\n"
          "\n"
          "  --name NAME          device and state folder name (letters, digits, _ . -;\n"
          "                       first and last a letter or digit)\n"
          "  --mem SIZE, --sm PCT the caps, as for cudacap run\n"
          "  --sm-soft PCT        the elastic limit, as for cudacap run\n"
          "  --root ROOT          host folder of state folders (as for cudacap status)\n"
          "  --lib PATH           the library on the host (default: as for cudacap run)\n"
          "  --kind VENDOR/CLASS  CDI kind, default cudacap.io/cap\n"
          "  --output FILE        write FILE (e.g. /etc/cdi/cudacap.json) and create the\n"
          "                       missing state folders and their limits.d (CDI bind\n"
          "                       mounts need them)\n"
          "\n"
          "The cdiVersion is the lowest the content needs (runtimes reject versions they\n"
          "do not know): 0.3.0, or 0.5.0 for a NAME starting with a digit, 0.6.0 for a\n"
          "\".\" in CLASS.\n",
          f);
}

/* CDI's name rules (pkg/parser): a device name of letters, digits, "_",
 * ".", "-" (we leave out ":", not a folder-name character everywhere),
 * starting and ending with a letter or digit; a vendor of letters, digits,
 * "_", ".", "-" starting with a letter; a class of letters, digits, "_",
 * "-" and (0.6.0) "."; vendor and class ending with a letter or digit. */
static int valid_name(const char *n)
{
    size_t l = strlen(n);
    if (!l || !isalnum((unsigned char)n[0]) || !isalnum((unsigned char)n[l - 1])) return 0;
    for (; *n; n++)
        if (!isalnum((unsigned char)*n) && *n != '_' && *n != '.' && *n != '-') return 0;
    return 1;
}

static int valid_part(const char *p, size_t l)
{
    if (!l || !isalpha((unsigned char)p[0]) || !isalnum((unsigned char)p[l - 1])) return 0;
    for (size_t i = 0; i < l; i++)
        if (!isalnum((unsigned char)p[i]) && !strchr("._-", p[i])) return 0;
    return 1;
}

static int valid_kind(const char *k)
{
    const char *slash = strchr(k, '/');
    if (!slash || strchr(slash + 1, '/')) return 0;
    return valid_part(k, (size_t)(slash - k)) && valid_part(slash + 1, strlen(slash + 1));
}

/* The CDI library's rule (specs-go/version.go): a spec must declare at least
 * the version its content needs, and runtimes reject versions they do not
 * know (Debian 12's podman 4.3.1 knows up to 0.5.0). What this command
 * writes needs: env, mounts without "type", hooks: 0.3.0 (the earliest
 * supported); a device name starting with a digit: 0.5.0; a "." in the
 * kind's class (after the "/"): 0.6.0. We never write annotations (0.6.0),
 * mount types (0.4.0), device nodes, GIDs or RDT (0.7.0+). */
static const char *cdi_min_version(const char *kind, char **names, int n)
{
    const char *class = strchr(kind, '/');
    if (class && strchr(class + 1, '.')) return "0.6.0";
    for (int i = 0; i < n; i++)
        if (names[i][0] >= '0' && names[i][0] <= '9') return "0.5.0";
    return "0.3.0";
}

static void emit(FILE *f, const char *kind, char **names, int n, const char *mem, const char *sm,
                 const char *soft, const char *root, const char *lib, const char *self)
{
    fprintf(f, "{\n  \"cdiVersion\": \"%s\",\n  \"kind\": ", cdi_min_version(kind, names, n));
    json_str(f, kind);
    fputs(",\n  \"devices\": [", f);
    for (int i = 0; i < n; i++) {
        char dir[PATH_MAX + 256], env[512];
        snprintf(dir, sizeof dir, "%s/%s", root, names[i]);
        fprintf(f, "%s\n    {\n      \"name\": ", i ? "," : "");
        json_str(f, names[i]);
        fputs(",\n      \"containerEdits\": {\n        \"env\": [", f);
        snprintf(env, sizeof env, "LD_PRELOAD=%s", CTR_LIB);
        json_str(f, env);
        fputs(", ", f);
        snprintf(env, sizeof env, "CUDACAP_STATE_DIR=%s", CTR_STATE);
        json_str(f, env);
        if (mem) {
            snprintf(env, sizeof env, "CUDACAP_MEM_LIMIT=%s", mem);
            fputs(", ", f);
            json_str(f, env);
        }
        if (sm) {
            snprintf(env, sizeof env, "CUDACAP_SM_LIMIT=%s", sm);
            fputs(", ", f);
            json_str(f, env);
        }
        if (soft) {
            snprintf(env, sizeof env, "CUDACAP_SM_SOFT_LIMIT=%s", soft);
            fputs(", ", f);
            json_str(f, env);
        }
        fputs("],\n        \"mounts\": [\n          {\"hostPath\": ", f);
        json_str(f, dir);
        fputs(", \"containerPath\": \"" CTR_STATE "\", \"options\": [\"rw\", \"bind\", \"nosuid\", "
              "\"nodev\", \"noexec\"]},\n          {\"hostPath\": ", f);
        /* The limits folder read-only over the writable state folder (after
         * it: mounts are made in order): the container, root in it
         * included, cannot replace its caps; cudacap set's new file shows
         * through (cap/limits.h). */
        char ld[PATH_MAX + 300];
        snprintf(ld, sizeof ld, "%s/" CC_LIMITS_DIR, dir);
        json_str(f, ld);
        fputs(", \"containerPath\": \"" CTR_STATE "/" CC_LIMITS_DIR "\", \"options\": [\"ro\", \"bind\", "
              "\"nosuid\", \"nodev\", \"noexec\"]},\n          {\"hostPath\": ", f);
        json_str(f, lib);
        fputs(", \"containerPath\": \"" CTR_LIB "\", \"options\": [\"ro\", \"bind\", \"nosuid\", "
              "\"nodev\"]}\n        ],\n        \"hooks\": [\n          {\"hookName\": "
              "\"createRuntime\", \"path\": ", f);
        json_str(f, self);
        fputs(", \"args\": [\"cudacap\", \"prepare\", ", f);
        /* The caps also go to the limits file prepare writes (as root, the
         * hook's user) at each start: the container's own environment
         * cannot raise them. The env above stays for older libraries. */
        const char *flag[3] = {"--mem", "--sm", "--sm-soft"}, *val[3] = {mem, sm, soft};
        for (int k = 0; k < 3; k++)
            if (val[k]) {
                json_str(f, flag[k]);
                fputs(", ", f);
                json_str(f, val[k]);
                fputs(", ", f);
            }
        json_str(f, dir);
        fputs("]}\n        ]\n      }\n    }", f);
    }
    fputs("\n  ]\n}\n", f);
}

int cmd_cdi(int argc, char **argv)
{
    char *names[MAX_NAMES];
    int n = 0;
    const char *mem = NULL, *sm = NULL, *soft = NULL, *root_opt = NULL, *lib_opt = NULL, *kind = "cudacap.io/cap",
               *out = NULL, *v;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) return usage(stdout), 0;
        else if (cli_opt_val(argc, argv, &i, "--name", &v)) {
            if (!valid_name(v)) cli_usage_error("--name: \"%s\" is not a CDI device name", v);
            if (n == MAX_NAMES) cli_usage_error("--name: at most %d names", MAX_NAMES);
            for (int k = 0; k < n; k++)
                if (!strcmp(names[k], v)) cli_usage_error("--name: \"%s\" given twice", v);
            names[n++] = (char *)v;
        } else if (cli_opt_val(argc, argv, &i, "--mem", &v)) mem = v;
        else if (cli_opt_val(argc, argv, &i, "--sm", &v)) sm = v;
        else if (cli_opt_val(argc, argv, &i, "--sm-soft", &v)) soft = v;
        else if (cli_opt_val(argc, argv, &i, "--root", &v)) root_opt = v;
        else if (cli_opt_val(argc, argv, &i, "--lib", &v)) lib_opt = v;
        else if (cli_opt_val(argc, argv, &i, "--kind", &v)) kind = v;
        else if (cli_opt_val(argc, argv, &i, "--output", &v)) out = v;
        else if (argv[i][0] == '-') cli_usage_error("unknown option %s", argv[i]);
        else cli_usage_error("unexpected argument \"%s\"", argv[i]);
    }
    if (n == 0) cli_usage_error("missing --name NAME (one CDI device per container)");
    if (mem) cli_parse_size("--mem", mem);
    cli_check_sm(sm, soft);
    if (!valid_kind(kind)) cli_usage_error("--kind: \"%s\" is not VENDOR/CLASS", kind);
    if (out && !*out) cli_usage_error("--output: empty path");
    const char *root = cli_default_root(root_opt);
    if (root[0] != '/') cli_usage_error("--root: \"%s\" must be absolute in a CDI spec", root);
    char lib[2 * PATH_MAX], self[PATH_MAX];
    if (cli_find_library(lib_opt, lib, sizeof lib) != 0) {
        cli_err("cannot find libcudacap.so (tried %s)%s", lib, lib_opt ? "" : "; pass --lib PATH");
        return 1;
    }
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sl <= 0) return cli_err("cannot find this binary: %s", strerror(errno)), 1;
    self[sl] = 0;
    if (!out) {
        emit(stdout, kind, names, n, mem, sm, soft, root, lib, self);
        return fflush(stdout) == 0 ? 0 : 1;
    }
    for (int i = 0; i < n; i++) {
        char dir[PATH_MAX + 256];
        snprintf(dir, sizeof dir, "%s/%s", root, names[i]);
        if (access(dir, F_OK) != 0 && cli_prepare_dir(dir, 0700, -1, -1) != 0) return 1;
        /* Its limits folder too: the spec mounts it. */
        char canon[PATH_MAX];
        int dfd = cli_open_state_dir(dir, 0, 0700, canon, sizeof canon);
        int ldfd = dfd >= 0 ? cli_limits_dir(dfd, canon) : -1;
        if (dfd >= 0) close(dfd);
        if (ldfd < 0) return 1;
        close(ldfd);
    }
    char tmp[PATH_MAX + 32];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", out, (long)getpid());
    FILE *f = fopen(tmp, "we");
    if (!f) return cli_err("cannot write %s: %s", tmp, strerror(errno)), 1;
    emit(f, kind, names, n, mem, sm, soft, root, lib, self);
    if (fclose(f) != 0 || rename(tmp, out) != 0) {
        cli_err("cannot write %s: %s", out, strerror(errno));
        unlink(tmp);
        return 1;
    }
    return 0;
}
