/* The simulator reads sizes with the library's parser (cc_parse_size):
 * each string below, as CUDACAP_SIM_MEM of a fresh simulator, gives the
 * device the size the library reads from it, or the default (80g) where the
 * library refuses it. The hard-coded rows are ones the simulator's own
 * parser used to read differently (a trailing word ignored, a fraction
 * read as bytes). */
#include "simtest.h"

#include <string.h>
#include <unistd.h>

#include "cudacap/config.h"

#define GiB (1ull << 30)
#define MiB (1ull << 20)
#define DEFAULT_MEM (80 * GiB)

static const char *value;
static int idx;
static int out[2];

/* A fresh simulator (its own state folder) with CUDACAP_SIM_MEM=value:
 * writes device 0's total memory to the pipe. */
static int child(void *arg)
{
    (void)arg;
    char d[600];
    snprintf(d, sizeof d, "%s/%d", getenv("CUDACAP_SIM_DIR"), idx);
    setenv("CUDACAP_SIM_DIR", d, 1);
    setenv("CUDACAP_SIM_MEM", value, 1);
    size_t total = 0;
    CU(cuInit(0));
    CU(cuDeviceTotalMem(&total, 0));
    uint64_t t = total;
    return write(out[1], &t, sizeof t) == (ssize_t)sizeof t ? 0 : 1;
}

static uint64_t sim_total(const char *v, int i)
{
    value = v;
    idx = i;
    CHECK(pipe(out) == 0);
    int pid = st_fork(child, NULL);
    CHECK(st_wait(pid) == 0);
    uint64_t t = 0;
    CHECK(read(out[0], &t, sizeof t) == (ssize_t)sizeof t);
    close(out[0]);
    close(out[1]);
    return t;
}

int main(void)
{
    st_setup();
    static const struct { const char *in; uint64_t want; } rows[] = {
        {"8g", 8 * GiB},
        {"4GiB", 4 * GiB},
        {"4096m", 4 * GiB},
        {"1048576k", GiB},
        {"1.5g", 3 * GiB / 2},        /* was 1 byte: the fraction stopped the number */
        {" 2g ", 2 * GiB},
        {"12345", 12345},
        {"8gx", DEFAULT_MEM},         /* was 8 GiB: the trailing word ignored */
        {"8 g", DEFAULT_MEM},         /* was 8 bytes */
        {"0x10", DEFAULT_MEM},        /* was 0 bytes */
        {"-1g", DEFAULT_MEM},         /* was 2^64 - 2^30 */
        {"g", DEFAULT_MEM},
        {"1.5", DEFAULT_MEM},         /* fractional bytes */
        {"99999999999999999999", DEFAULT_MEM}, /* above 16 EiB */
    };
    int n = (int)(sizeof rows / sizeof rows[0]);
    for (int i = 0; i < n; i++) {
        uint64_t lib;
        uint64_t want_lib = cc_parse_size(rows[i].in, &lib) == 0 ? lib : DEFAULT_MEM;
        uint64_t got = sim_total(rows[i].in, i);
        if (got != rows[i].want || want_lib != rows[i].want) {
            fprintf(stderr, "CUDACAP_SIM_MEM=\"%s\": simulator %llu, library %llu, want %llu\n",
                    rows[i].in, (unsigned long long)got, (unsigned long long)want_lib,
                    (unsigned long long)rows[i].want);
            return 1;
        }
    }
    printf("config: %d sizes read as the library reads them\n", n);
    return 0;
}
