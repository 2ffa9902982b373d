/* cudacap status: every container under ROOT, read-only (top: cmd_top.c). */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/noderoots.h"
#include "cli/render.h"

#define MAX_CONTAINERS SNAP_MAX_CONTAINERS

static void status_usage(FILE *f)
{
    fputs("usage: cudacap status [--json] [--brief] [--root ROOT | ROOT | --all-users]\n"
          "\n"
          "Shows every container under ROOT (one state folder each): per device, memory\n"
          "used / cap, SM utilization / cap, the process sampling NVML, and the\n"
          "container's processes. Reads the state files only: never locks, never\n"
          "blocks a running container; a region being rebuilt or of another layout\n"
          "shows as \"no data\".\n"
          "\n"
          "  --json        one JSON document (docs/cli.md describes its fields)\n"
          "  --brief       no process lines\n"
          "  --root ROOT   the folder of state folders (default: $CUDACAP_ROOT, else\n"
          "                /var/lib/cudacap/containers as root, /tmp/cudacap-<uid>/containers\n"
          "                otherwise)\n"
          "  --all-users   every container of the node: the system root\n"
          "                ($CUDACAP_SYSTEM_ROOT, else /var/lib/cudacap/containers), then\n"
          "                each user's /tmp/cudacap-<uid>/containers, named <user>/<name>\n",
          f);
}

int cmd_status(int argc, char **argv)
{
    int json = 0, brief = 0, all = 0;
    const char *root_opt = NULL, *pos = NULL, *v;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) return status_usage(stdout), 0;
        else if (cli_opt_flag(argv, i, "--json")) json = 1;
        else if (cli_opt_flag(argv, i, "--brief")) brief = 1;
        else if (cli_opt_flag(argv, i, "--all-users")) all = 1;
        else if (cli_opt_val(argc, argv, &i, "--root", &v)) root_opt = v;
        else cli_root_positional(argv[i], &pos);
    }
    if (all && (pos || root_opt)) cli_usage_error("--all-users and a ROOT exclude each other");
    const char *root = all ? "all users" : cli_root_arg(pos, root_opt);
    struct snap **s;
    int n = snap_collect_any(root, all, &s);
    if (n < 0) {
        cli_err("cannot read %s: %s", root, strerror(errno));
        return 1;
    }
    if (json) render_json(stdout, root, s, n);
    else if (n == 0) printf("no containers under %s\n", root);
    else render_table(stdout, s, n, brief, NULL, 0);
    snap_release(s, n);
    return 0;
}
