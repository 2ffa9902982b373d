/* CC_TEST_CTX_CONTROL (mem.ctx.*.control): one library for the context
 * admission's controls, the one removed chosen at run time by the
 * variable CC_TEST_CTX_CONTROL: noadmit (no admission), nolearn (the
 * measured size never published), nocode (no limit or module growth
 * counted). */
#include <stdlib.h>
#include <string.h>

static inline int ctx_control(const char *what)
{
    const char *v = getenv("CC_TEST_CTX_CONTROL");
    return v && !strcmp(v, what);
}
