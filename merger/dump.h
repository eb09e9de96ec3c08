/*
 * dump: -t, every event as one text line:
 *   <ns from origin> <hostname> <provider:event> { vpid = 1, vtid = 1, ... } { field = value, ... }
 * in the order the reader delivers them (time order per host). Borrows the event.
 */
#ifndef ZM_DUMP_H
#define ZM_DUMP_H

#include <babeltrace2/babeltrace.h>
#include <stdint.h>
#include <stdio.h>

void zm_dump_event(FILE *out, const char *hostname, int64_t ns, const bt_event *event);

#endif
