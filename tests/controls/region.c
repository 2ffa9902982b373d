/* Controls of src/region/region.c (src/common/controls.h says how). */
#pragma GCC diagnostic ignored "-Wunused-function" /* the replaced control points */

#ifdef CC_TEST_UNBOUNDED_INIT_LOCK /* mem.region.lock.control: the blocking wait */
#define lock_init(fd) cc_os_lock(fd, 0, 1, F_WRLCK, 1)
#endif
#ifdef CC_TEST_NO_FILE_CHECKS /* mem.state.files.control: any regular file is ours */
#define foreign_file(st, why) 0
#endif
#ifdef CC_TEST_NO_PATH_RECHECK /* mem.state.relink.control: the file held is not checked against the path again */
#define still_ours(path, fd, st) ((void)(path), cc_os_fstat(fd, st) == 0)
#endif

#include "region/region.c"
