/* The cudacap command. Subcommands arrive with issue 5; for now: help and
 * version. */
#include <stdio.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: cudacap <command> [options]\n"
            "\n"
            "Caps a container's GPU memory and SM utilization from inside its processes.\n"
            "\n"
            "commands:\n"
            "  version     print the version\n"
            "  help        this text\n");
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "help") || !strcmp(argv[1], "--help") ||
        !strcmp(argv[1], "-h")) {
        usage(stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
        printf("cudacap %s\n", CUDACAP_VERSION_STRING);
        return 0;
    }
    fprintf(stderr, "cudacap: unknown command \"%s\"\n", argv[1]);
    usage(stderr);
    return 2;
}
