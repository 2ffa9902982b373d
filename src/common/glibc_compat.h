/* Force-included into every C file of libcudacap.so when
 * CUDACAP_GLIBC_COMPAT is ON (the default for normal builds): the library
 * must preload into images with an older glibc than the one it is built
 * against (CUDA images of CentOS 7: glibc 2.17), and a preloaded library
 * that needs a newer symbol version than the image's glibc fails to load,
 * so the program runs uncapped (or not at all).
 *
 * Building against glibc 2.34+ binds these to versions that did not exist
 * before: dlopen & co. and pthread_* moved into libc (GLIBC_2.34),
 * pthread_sigmask (2.32), stat/fstat/lstat became functions (2.33; before,
 * inline calls of __xstat & co.). Each is bound here to its original
 * version, which every glibc since still exports (as a compat symbol), and
 * the stat family calls __xstat & co. as the old headers did. The library
 * also links libdl.so.2 and libpthread.so.0 explicitly (stubs since 2.34,
 * the homes of those symbols before). scripts/check-glibc.sh checks the
 * result: no GLIBC_ version above 2.17 may be required (docs/kubernetes.md,
 * "glibc"). */
#ifndef CC_GLIBC_COMPAT_H
#define CC_GLIBC_COMPAT_H

#include <sys/stat.h>

#if defined(__x86_64__)
#define CC_GLIBC_BASE "GLIBC_2.2.5"
#define CC_GLIBC_SETNAME "GLIBC_2.12"
#define CC_STAT_VER 1 /* _STAT_VER_LINUX */
#elif defined(__aarch64__)
#define CC_GLIBC_BASE "GLIBC_2.17"
#define CC_GLIBC_SETNAME "GLIBC_2.17"
#define CC_STAT_VER 0
#endif

#ifdef CC_GLIBC_BASE
/* Only what the library uses with a newer default version (check-glibc.sh
 * lists any new one): binding a symbol that glibc moved into
 * libc_nonshared.a (pthread_atfork) would break it. */
#define CC_SYMVER(sym, ver) __asm__(".symver " #sym "," #sym "@" ver)
CC_SYMVER(dlopen, CC_GLIBC_BASE);
CC_SYMVER(dlerror, CC_GLIBC_BASE);
CC_SYMVER(dlvsym, CC_GLIBC_BASE);
CC_SYMVER(pthread_create, CC_GLIBC_BASE);
CC_SYMVER(pthread_once, CC_GLIBC_BASE);
CC_SYMVER(pthread_mutex_trylock, CC_GLIBC_BASE);
CC_SYMVER(pthread_sigmask, CC_GLIBC_BASE);
CC_SYMVER(pthread_setname_np, CC_GLIBC_SETNAME);

int __xstat(int ver, const char *path, struct stat *buf);
int __lxstat(int ver, const char *path, struct stat *buf);
int __fxstat(int ver, int fd, struct stat *buf);
CC_SYMVER(__xstat, CC_GLIBC_BASE);
CC_SYMVER(__lxstat, CC_GLIBC_BASE);
CC_SYMVER(__fxstat, CC_GLIBC_BASE);
static inline int cc_compat_stat(const char *p, struct stat *b) { return __xstat(CC_STAT_VER, p, b); }
static inline int cc_compat_lstat(const char *p, struct stat *b) { return __lxstat(CC_STAT_VER, p, b); }
static inline int cc_compat_fstat(int fd, struct stat *b) { return __fxstat(CC_STAT_VER, fd, b); }
#define stat(p, b) cc_compat_stat(p, b)
#define lstat(p, b) cc_compat_lstat(p, b)
#define fstat(fd, b) cc_compat_fstat(fd, b)
#endif

#endif
