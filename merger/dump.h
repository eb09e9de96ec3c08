/*
 * dump: -t, every event as one text line:
 *   <ns from origin> <hostname> <provider:event> { vpid = 1, vtid = 1, ... } { field = value, ... }
 * in the order the reader delivers them (time order per host). A one-event call (`_call`,
 * `_call_full`) ends with ` start_ns=<ns from origin>`, its call_start on the same scale as the
 * line's first number (`call_start` itself is a raw trace-clock value). Borrows the event.
 */
#ifndef ZM_DUMP_H
#define ZM_DUMP_H

#include <babeltrace2/babeltrace.h>
#include <stdint.h>
#include <stdio.h>

/* `start_ns`: a one-event call's start, or NULL for any other event. */
void zm_dump_event(FILE *out, const char *hostname, int64_t ns, const bt_event *event,
                   const int64_t *start_ns);

#endif
