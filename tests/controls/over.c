/* Controls of src/cap/mem/over.c (src/common/controls.h says how). */
#pragma GCC diagnostic ignored "-Wunused-function" /* the replaced control points */

#ifdef CC_TEST_OVER_NO_CHECKS /* mem.over.safety.control: no check of what host memory can back */
#define host_can_back(o, over, cap, conc) ((void)(o), (void)(over), (void)(cap), (void)(conc), 1)
#define host_has_room(o, bytes) ((void)(o), (void)(bytes), 1)
#endif

#include "cap/mem/over.c"
