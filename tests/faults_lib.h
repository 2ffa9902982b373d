/* Fault campaign, library side (tests/faults_lib.c): what its files share.
 * faults_lib.c runs the cases (the parent's workers, the monitor, one case,
 * main), faults_lib_worker.c is a worker, faults_lib_files.c spoils and
 * restores the state files and signs the files outside the folder,
 * faults_lib_forge.c forges counters in the live regions. One program: the
 * files share one count of failed checks (CHECK_SHARED, check.h). */
#ifndef CC_TEST_FAULTS_LIB_H
#define CC_TEST_FAULTS_LIB_H

#include <stdint.h>
#include <sys/types.h>

#define CHECK_SHARED
#include "check.h"
#include "cudacap/abi_compute_region.h"
#include "cudacap/abi_mem_region.h"
#include "mp_util.h"

#define MIB (1ull << 20)
#define KIB (1ull << 10)
#define CAP (256 * MIB)
#define CTX (16 * MIB)
#define BIG (4 * MIB)     /* fill: first in chunks of this */
#define SMALL (256 * KIB) /* then of this: "nothing lost" is to within one */
#define NW 3              /* workers of a case */
#define MAXW (NW + 1)     /* and the late joiner */
#define MAXHELD 256

enum { OP_CHURN = 1, OP_FREE, OP_FILL, OP_IDLE, OP_EXIT };

struct wslot {
    int pid;
    int ready;     /* 1: context up, module loaded */
    int cmd;       /* seq << 4 | op, from the parent */
    int ack;       /* seq done */
    uint64_t beats;
    uint64_t launches;
    uint64_t held;  /* bytes it holds (its own count) */
    uint64_t alloc_ok, alloc_refused;
    int err;        /* nonzero: a CUDA call failed unexpectedly */
};
struct shm {
    struct wslot w[MAXW];
};
extern struct shm *S;

/* The case's folders (faults_lib.c sets them): the base, the container's
 * state folder, good copies of its files, the files outside; this program. */
extern char g_base[700], g_state[800], g_good[800], g_out[800], g_self[1024];

/* ---- the worker (faults_lib_worker.c) ---- */
int worker(int id);

/* ---- the state files (faults_lib_files.c) ---- */
extern const char *FILES[];
#define NFILES 4
enum { K_RANDOM, K_TRUNC, K_FIFO, K_DIR, K_HARD, K_SYM, NKINDS };
extern const char *KINDS[];
void rm_rf(const char *p);
void path_of(char *out, size_t n, const char *dir, const char *f);
int copy_file(const char *from, const char *to);
void spoil(int f, int kind, uint64_t *seed);
void restore(int f, int kind);
/* The files outside the folder: content, size, mtime; and the names there. */
struct outside {
    char sig[4096];
};
void outside_sig(struct outside *o);

/* ---- forgeries (faults_lib_forge.c) ---- */
enum {
    F_USED0, F_USEDMAX, F_OWNER0, F_FOREIGN, F_REAPING, F_GEN, F_HW, F_DEVKEY, F_START,
    F_TOKMIN, F_TOKMAX, F_SHAREMAX, F_SHAREMIN, F_ACCRUE, F_REFILL, F_SAMPLE, F_UUIDSTATE,
    F_PROCS, NFORGE
};
extern const char *FORGE[];
int forge_exposed(int k);
void forge(int k, uint64_t *seed);

#endif
