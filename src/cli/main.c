/* The cudacap command: the node side of cudacap. One file per subcommand
 * (cmd_*.c); docs/cli.md is the manual. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *what;
} cmds[] = {
    {"run", cmd_run, "run a program capped as a container would be"},
    {"prepare", cmd_prepare, "create or empty a container's state folder (pre-start)"},
    {"set", cmd_set, "change a running container's caps (its limits file)"},
    {"status", cmd_status, "memory, utilization, caps and processes of every container"},
    {"top", cmd_top, "status, live, with a utilization history"},
    {"metrics", cmd_metrics, "Prometheus exposition (stdout, textfile or HTTP)"},
    {"cdi", cmd_cdi, "a CDI specification injecting the library, caps and state"},
    {"doctor", cmd_doctor, "check the driver, NVML, the library, the state folder"},
};
#define NCMDS ((int)(sizeof cmds / sizeof cmds[0]))

static void usage(FILE *f)
{
    fprintf(f, "usage: cudacap <command> [options]   (cudacap <command> --help for each)\n"
               "\n"
               "Caps a container's GPU memory and SM utilization from inside its processes.\n"
               "\n"
               "commands:\n");
    for (int i = 0; i < NCMDS; i++) fprintf(f, "  %-9s %s\n", cmds[i].name, cmds[i].what);
    fprintf(f, "  %-9s %s\n  %-9s %s\n", "version", "print the version", "help", "this text");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "help") || cli_is_help(argv[1])) {
        if (argc > 2 && strcmp(argv[1], "help") == 0)
            for (int i = 0; i < NCMDS; i++)
                if (!strcmp(argv[2], cmds[i].name)) {
                    char *h[] = {argv[2], "--help", NULL};
                    cli_cmd = cmds[i].name;
                    return cmds[i].fn(2, h);
                }
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
        printf("cudacap %s\n", CUDACAP_VERSION_STRING);
        return 0;
    }
    for (int i = 0; i < NCMDS; i++)
        if (!strcmp(argv[1], cmds[i].name)) {
            cli_cmd = cmds[i].name;
            return cmds[i].fn(argc - 1, argv + 1);
        }
    fprintf(stderr, "cudacap: unknown command \"%s\"\n", argv[1]);
    usage(stderr);
    return CLI_EXIT_USAGE;
}
