/* include/cudacap/cuda_api.h (our declarations of the CUDA driver API) against
 * NVIDIA's cuda.h, from the same lists that declare ours. Compiled beside
 * NVIDIA's header by scripts/check_cuda_api.sh (ctest cuda_api.*) in each of
 * its modes; a difference fails the compile (types, values, layouts) or the
 * run (what a name expands to, a #define'd constant's value):
 *   - every typedef names the same type as NVIDIA's (handles: the same struct tag);
 *   - every enumerator has NVIDIA's value, and every enum NVIDIA's tag, size and
 *     underlying type (compared through a copy of our enum built here);
 *   - every struct and union has NVIDIA's tag, size and alignment, and each member
 *     NVIDIA's offset, size and type (compared through a copy of ours built here;
 *     members of anonymous nested structs by offset);
 *   - every function has the type of NVIDIA's declaration of that exported name
 *     (under __CUDA_API_VERSION_INTERNAL, where cuda.h declares every exported
 *     name with its own ABI: cuMemAlloc_v2, cuLaunchKernel_ptsz, cuGetProcAddress);
 *   - every function name and versioned name expands to what NVIDIA's expands to
 *     (cuMemAlloc to cuMemAlloc_v2; under CUDA_API_PER_THREAD_DEFAULT_STREAM,
 *     cuLaunchKernel to cuLaunchKernel_ptsz), and each listed constant has
 *     NVIDIA's value (tests/cuda_api_own.c gives ours).
 * Controls (CC_CUDA_API_CONTROL_FUNCTION, _VALUE, _LAYOUT; _NAMES in
 * cuda_api_own.c): one wrong entry each, through the same checks. */
#include <cuda.h>
#ifndef __cuda_cuda_h__
#error "tests/cuda_api_check.c must be compiled against NVIDIA's cuda.h"
#endif
#include <stdio.h>
#include <string.h>

#define CC_CUDA_LISTS_ONLY
#include "cudacap/cuda_api.h"

#include "cuda_api_names.h"

#define CC_MSG(what) "include/cudacap/cuda_api.h differs from NVIDIA's cuda.h: " what

/* typedefs and handles */
#define CHK_T(name, type) _Static_assert(__builtin_types_compatible_p(name, type), CC_MSG("typedef " #name));
#define CHK_H(name, tag) _Static_assert(__builtin_types_compatible_p(name, struct tag *), CC_MSG("handle " #name));

/* enums: our enumerators as a copy (cc_mirror_<name>), then NVIDIA's values */
#define MIR_K(k, v) cc_mirror_##k = v,
#define CHK_K(k, v) _Static_assert((k) == (v), CC_MSG("value of " #k));
#define CHK_E(tag, name)                                                                                    \
    enum cc_mirror_##name { CC_CUDA_ENUM_##name(MIR_K) };                                                     \
    _Static_assert(__builtin_types_compatible_p(name, enum tag), CC_MSG("tag of enum " #name));               \
    _Static_assert(sizeof(name) == sizeof(enum cc_mirror_##name) &&                                           \
                       __builtin_types_compatible_p(name, unsigned int) ==                                    \
                           __builtin_types_compatible_p(enum cc_mirror_##name, unsigned int) &&               \
                       __builtin_types_compatible_p(name, int) ==                                             \
                           __builtin_types_compatible_p(enum cc_mirror_##name, int),                          \
                   CC_MSG("underlying type of enum " #name));                                                 \
    CC_CUDA_ENUM_##name(CHK_K)

/* structs and unions: our members as a copy (cc_mirror_<id>), compared member by member */
#define MIR_M(type, member, array) type member array;
#define MIR_P(path)
#define CHK_N(type, member, array)                                                                          \
    _Static_assert(offsetof(cc_nv, member) == offsetof(cc_ours, member) &&                                    \
                       sizeof(((cc_nv *)0)->member) == sizeof(((cc_ours *)0)->member),                        \
                   CC_MSG("offset or size of member " #member));
#define CHK_M(type, member, array)                                                                          \
    CHK_N(type, member, array)                                                                              \
    _Static_assert(__builtin_types_compatible_p(__typeof__(((cc_nv *)0)->member),                             \
                                                __typeof__(((cc_ours *)0)->member)),                          \
                   CC_MSG("type of member " #member));
#define CHK_P(path) _Static_assert(offsetof(cc_nv, path) == offsetof(cc_ours, path), CC_MSG("offset of " #path));
#define CHK_STRUCT(kind, tag, name, id, members)                                                            \
    typedef kind { members(MIR_M, MIR_M, MIR_P) } cc_mirror_##id;                                             \
    _Static_assert(__builtin_types_compatible_p(name, kind tag), CC_MSG("tag of " #name));                    \
    _Static_assert(sizeof(name) == sizeof(cc_mirror_##id), CC_MSG("size of " #name));                         \
    _Static_assert(_Alignof(name) == _Alignof(cc_mirror_##id), CC_MSG("alignment of " #name));                \
    void cc_check_##id(void);                                                                                 \
    void cc_check_##id(void)                                                                                  \
    {                                                                                                         \
        typedef name cc_nv;                                                                                   \
        typedef cc_mirror_##id cc_ours;                                                                       \
        members(CHK_M, CHK_N, CHK_P)                                                                          \
    }
#define CHK_S(kind, tag, name) CHK_STRUCT(kind, tag, name, name, CC_CUDA_MEMBERS_##name)

CC_CUDA_TYPES(CHK_T, CHK_H, CHK_E, CHK_S)

/* functions: the type of NVIDIA's declaration of each exported name */
#define CHK_F(ret, name, params)                                                                            \
    _Static_assert(__builtin_types_compatible_p(__typeof__(name), ret params), CC_MSG("prototype of " #name));
#ifdef __CUDA_API_VERSION_INTERNAL
CC_CUDA_FUNCTIONS(CHK_F)
#endif

/* The negative controls: one wrong entry each, which the checks above must refuse. */
#ifdef CC_CUDA_API_CONTROL_FUNCTION /* a parameter narrower than NVIDIA's */
#ifndef __CUDA_API_VERSION_INTERNAL
#undef cuMemAlloc_v2
#endif
CHK_F(CUresult, cuMemAlloc_v2, (CUdeviceptr * dptr, unsigned int bytesize))
#endif
#ifdef CC_CUDA_API_CONTROL_VALUE /* an error code off by one */
CHK_K(CUDA_ERROR_OUT_OF_MEMORY, 3)
#endif
#ifdef CC_CUDA_API_CONTROL_LAYOUT /* a member wider than NVIDIA's, moving none before it */
#define CC_CONTROL_MEMBERS(M, N, P) M(CUmemLocationType, type, ) M(long long, id, )
CHK_STRUCT(struct, CUmemLocation_st, CUmemLocation_v1, control, CC_CONTROL_MEMBERS)
#endif

#define CC_COUNT1(a) +1
#define CC_COUNT2(a, b) +1
#define CC_COUNT3(a, b, c) +1
enum {
    CC_N_TYPES = 0 CC_CUDA_TYPES(CC_COUNT2, CC_COUNT2, CC_COUNT2, CC_COUNT3),
    CC_N_FUNCTIONS = 0 CC_CUDA_FUNCTIONS(CC_COUNT3),
};

static const struct cc_cuda_name names_nv[] = {CC_CUDA_NAME_TABLE()};
static const struct cc_cuda_const consts_nv[] = {CC_CUDA_CONST_TABLE()};

#if defined(__CUDA_API_VERSION_INTERNAL)
#define CC_MODE "__CUDA_API_VERSION_INTERNAL"
#elif defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
#define CC_MODE "CUDA_API_PER_THREAD_DEFAULT_STREAM"
#else
#define CC_MODE "plain"
#endif

int main(void)
{
    size_t nn = sizeof names_nv / sizeof names_nv[0], nc = sizeof consts_nv / sizeof consts_nv[0];
    int bad = 0;
    if (nn != cc_cuda_names_own_len || nc != cc_cuda_consts_own_len) {
        fprintf(stderr, "cuda_api: the two sides were built from different lists\n");
        return 2;
    }
    for (size_t i = 0; i < nn; i++)
        if (strcmp(names_nv[i].expansion, cc_cuda_names_own[i].expansion) != 0) {
            fprintf(stderr, "cuda_api (%s): %s expands to %s with include/cudacap/cuda_api.h, to %s with NVIDIA's cuda.h\n",
                    CC_MODE, names_nv[i].name, cc_cuda_names_own[i].expansion, names_nv[i].expansion);
            bad = 1;
        }
    for (size_t i = 0; i < nc; i++)
        if (consts_nv[i].value != cc_cuda_consts_own[i].value) {
            fprintf(stderr, "cuda_api (%s): %s is %#llx in include/cudacap/cuda_api.h, %#llx in NVIDIA's cuda.h\n", CC_MODE,
                    consts_nv[i].name, cc_cuda_consts_own[i].value, consts_nv[i].value);
            bad = 1;
        }
    if (!bad)
        printf("cuda_api (%s): %d types, %d functions%s, %zu names and %zu constants as NVIDIA's cuda.h has them\n",
               CC_MODE, CC_N_TYPES, CC_N_FUNCTIONS,
#ifdef __CUDA_API_VERSION_INTERNAL
               " (prototypes compared)",
#else
               "",
#endif
               nn, nc);
    return bad;
}
