/* The port wrapped with fault points (port_fault.c). */
#ifndef CC_CAP_PORT_FAULT_H
#define CC_CAP_PORT_FAULT_H

#include "cap/port.h"

/* A port whose entries fail as common/fault.h arms them and otherwise call
 * inner's. One per process: the first inner given is kept (later calls
 * return the same wrapper). */
const cc_port_t *cc_port_with_faults(const cc_port_t *inner);

#endif
