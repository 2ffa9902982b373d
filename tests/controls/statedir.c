/* Controls of src/cli/statedir.c (src/common/controls.h says how). */
#pragma GCC diagnostic ignored "-Wunused-function" /* the replaced control points */

#ifdef CLI_TEST_FOLLOW_LINKS /* cli.prepare.paths.negative_control: the kernel resolves the path, links and all */
static int open_followed(const char *dir);
#define open_walked(dir, path, create, mode) ((void)(path), (void)(create), (void)(mode), open_followed(dir))
#endif

#include "cli/statedir.c"

#ifdef CLI_TEST_FOLLOW_LINKS
static int open_followed(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) cli_err("cannot open %s: %s", dir, strerror(errno));
    return fd;
}
#endif
