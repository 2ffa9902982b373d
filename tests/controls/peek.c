/* Controls and the tests' pause of src/region/peek.c (src/common/controls.h
 * says how). */
#pragma GCC diagnostic ignored "-Wunused-function" /* the replaced control points */

#include <sys/stat.h>
#include <sys/types.h>

#ifdef CLI_TEST_BLOCKING_OPEN /* cli.status.unusable.negative_control: a FIFO blocks the open */
static int blocking_open(const char *path, struct stat *st, int *at);
#define open_state(path, st, at) blocking_open(path, st, at)
#endif
#ifdef CLI_TEST_PEEK_PAUSE /* the hook of cli.status.truncate: a pause inside each read */
static void test_pause(int fd, const char *path, off_t size);
#endif
#ifdef CLI_TEST_MMAP_PEEK /* cli.status.truncate.negative_control: read through a shared mapping */
static size_t mmap_read(int fd, char *copy, size_t size, const char *path, off_t at_open);
#define read_all(fd, copy, size, path, at_open) mmap_read(fd, copy, size, path, at_open)
#elif defined CLI_TEST_PEEK_PAUSE
/* The real read, after the pause (a macro naming itself calls the function). */
#define read_all(fd, copy, size, path, at_open) (test_pause(fd, path, at_open), read_all(fd, copy, size, path, at_open))
#endif

#include "region/peek.c"

#ifdef CLI_TEST_BLOCKING_OPEN
/* The open without O_NONBLOCK, then the same checks as cc_os_open_regular. */
static int blocking_open(const char *path, struct stat *st, int *at)
{
    *at = CC_OS_AT_OPEN;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return -1;
    *at = CC_OS_AT_FSTAT;
    if (cc_os_fstat(fd, st) == 0) {
        *at = CC_OS_AT_TYPE;
        if (S_ISREG(st->st_mode)) return fd;
    }
    close(fd);
    return -1;
}
#endif
#ifdef CLI_TEST_PEEK_PAUSE
/* Announce the open file and wait (at most 30 s: a loaded CI machine ran
 * the script past 5 s once) until its size changes, so a test can truncate
 * it at a known point of the read. */
static void test_pause(int fd, const char *path, off_t size)
{
    fprintf(stderr, "peek: paused %s\n", path);
    struct stat st;
    for (int i = 0; i < 3000 && cc_os_fstat(fd, &st) == 0 && st.st_size == size; i++) usleep(10000);
}
#endif
#ifdef CLI_TEST_MMAP_PEEK
static size_t mmap_read(int fd, char *copy, size_t size, const char *path, off_t at_open)
{
    void *m = cc_os_map_shared(NULL, size, fd, 0);
    if (!m) return 0;
#ifdef CLI_TEST_PEEK_PAUSE
    test_pause(fd, path, at_open);
#else
    (void)path, (void)at_open;
#endif
    memcpy(copy, m, size); /* SIGBUS past a truncated end */
    cc_os_unmap(m, size);
    return size;
}
#endif
