/* The configuration global (cfg.h). Alone in its file: a test that links
 * libcudacap_core and defines its own cc_cfg keeps it. */
#include "cap/cfg.h"

cc_config_t cc_cfg;
