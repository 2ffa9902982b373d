/* The memory region under bad files and folders (no CUDA). Each case runs
 * in a fresh child process (the ledger attaches once per process):
 *   garbage     the file is 1 MiB of random bytes        -> rebuilt, shared
 *   truncated   the file is 100 bytes                    -> rebuilt, shared
 *   oldlayout   right magic, older layout_version, data  -> rebuilt, shared
 *   badslots    valid header, slots_hw and counts garbage, owners dead
 *                                                        -> clamped, swept
 *   unwritable  the state folder cannot be created       -> private ledger,
 *                                                           per-process cap
 * In every case the cap holds exactly: cap bytes fit, one more byte does not. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cap/memledger.h"
#include "check.h"
#include "mp_util.h"
#include "cudacap/abi_mem_region.h"

#define MIB (1ull << 20)
static const char *UUID = "GPU-00000000-test-flts-0000-000000000000";

static void write_file(const char *path, const void *p, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || write(fd, p, n) != (ssize_t)n) fprintf(stderr, "cannot write %s\n", path);
    if (fd >= 0) close(fd);
}

/* In a child: attach, then check the cap is exact and the sharing mode. */
static int exercise(const char *dir, int want_shared)
{
    const uint64_t cap = 100 * MIB;
    int shared = cc_ml_attach(dir);
    int h = cc_ml_device(dir, UUID, cap);
    CHECK(shared == want_shared, "shared=%d, expected %d", shared, want_shared);
    cc_ml_sweep();
    CHECK(cc_ml_used(h) == 0, "fresh ledger counts %llu", (unsigned long long)cc_ml_used(h));
    CHECK(cc_ml_reserve(h, 60 * MIB, cap) == 0, "60 MiB of 100 refused");
    CHECK(cc_ml_reserve(h, 40 * MIB, cap) == 0, "last 40 MiB of 100 refused");
    CHECK(cc_ml_reserve(h, 1, cap) != 0, "one byte over the cap accepted");
    cc_ml_release(h, 100 * MIB);
    CHECK(cc_ml_used(h) == 0, "after release %llu", (unsigned long long)cc_ml_used(h));
    return check_failures;
}

static int run_case(const char *name, const char *dir, int want_shared)
{
    fflush(stdout);
    pid_t p = fork();
    if (p == 0) _exit(exercise(dir, want_shared) ? 1 : 0);
    int st = 0;
    waitpid(p, &st, 0);
    int ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
    printf("%-11s %s\n", name, ok ? "ok" : "FAILED");
    CHECK(ok, "case %s (status 0x%x)", name, st);
    return ok;
}

int main(int argc, char **argv)
{
    char dir[900], path[1000];
    if (argc < 2 || fresh_state_dir(argv[1], dir, sizeof dir, path, sizeof path) != 0) return 2;
    const char *base = argv[1];
    mkdir(dir, 0700);

    static unsigned char buf[CC_MEM_FILE_SIZE];
    srand(12345);
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = (unsigned char)rand();
    write_file(path, buf, sizeof buf);
    run_case("garbage", dir, 1);

    write_file(path, buf, 100);
    run_case("truncated", dir, 1);

    memset(buf, 0, sizeof buf);
    cc_mem_region_t *r = (cc_mem_region_t *)buf;
    r->hdr.magic = CC_MEM_MAGIC;
    r->hdr.layout_version = CC_MEM_LAYOUT - 1;
    r->hdr.region_size = 4096;
    r->hdr.device_count = 8;
    memset(buf + 64, 0x5a, 4096);
    write_file(path, buf, sizeof buf);
    run_case("oldlayout", dir, 1);

    /* A valid header but nonsense inside: hw past the end, dead owners with
     * huge counts, and a device entry that is ours with a huge count. */
    memset(buf, 0, sizeof buf);
    r->hdr.magic = CC_MEM_MAGIC;
    r->hdr.layout_version = CC_MEM_LAYOUT;
    r->hdr.region_size = sizeof(cc_mem_region_t);
    r->hdr.device_count = CC_MEM_DEVS;
    r->slots_hw = 0xffffffffu;
    for (int i = 0; i < CC_MEM_SLOTS; i += 7) {
        r->proc[i].owner = 0x7ffffff0u - (uint32_t)i; /* no such pids */
        for (int d = 0; d < CC_MEM_DEVS; d++) r->used[d][i] = UINT64_MAX - (uint64_t)i;
    }
    write_file(path, buf, sizeof buf);
    run_case("badslots", dir, 1);

    /* A state "folder" below a regular file cannot exist: ENOTDIR. (As root a
     * chmod would not stop us, so this is the portable unwritable case.) */
    snprintf(path, sizeof path, "%s/file", base);
    write_file(path, "x", 1);
    snprintf(dir, sizeof dir, "%s/file/state", base);
    run_case("unwritable", dir, 0);
    CHECK_EXIT();
}
