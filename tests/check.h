/* Minimal test assertions: print what failed and where, count failures. */
#ifndef CC_CHECK_H
#define CC_CHECK_H

#include <stdio.h>
#include <stdlib.h>

/* One program of several files defines CHECK_SHARED before including this
 * in each, and CHECK_SHARED_DEFINE in the one that holds the count: one
 * count of failed checks for the program. */
#if defined(CHECK_SHARED_DEFINE)
int check_failures;
#elif defined(CHECK_SHARED)
extern int check_failures;
#else
static int check_failures;
#endif

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                      \
            fprintf(stderr, "\n");                                             \
            check_failures++;                                                  \
        }                                                                      \
    } while (0)

#define CHECK_CU(call)                                                         \
    do {                                                                       \
        CUresult r_ = (call);                                                  \
        if (r_ != CUDA_SUCCESS) {                                              \
            fprintf(stderr, "%s:%d: %s returned %d\n", __FILE__, __LINE__, #call, (int)r_); \
            check_failures++;                                                  \
        }                                                                      \
    } while (0)

/* Exit status for CTest: 0 pass, 1 fail, 77 skip (SKIP_RETURN_CODE). */
#define CHECK_EXIT()                                                           \
    do {                                                                       \
        if (check_failures) fprintf(stderr, "%d check(s) failed\n", check_failures); \
        return check_failures ? 1 : 0;                                         \
    } while (0)

#endif
