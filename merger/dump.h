/*
 * dump: -t, every event as one text line:
 *   <ns from origin> <hostname> <provider:event> { vpid = 1, vtid = 1, ... } { field = value, ... }
 * in the order the reader delivers them (time order per host). A one-event call (`_call`,
 * `_call_full`) ends with ` start_ns=<ns from origin>`, its call_start on the same scale as the
 * line's first number (`call_start` itself is a raw trace-clock value). Borrows the event.
 * The lines go through a memory stream and reach the final stream (stdout) in whole lines only.
 */
#ifndef ZM_DUMP_H
#define ZM_DUMP_H

#include "must_check.h"

#include <babeltrace2/babeltrace.h>
#include <stdint.h>
#include <stdio.h>

/* The stream to give zm_dump_event (NULL if out of memory); its lines go on to `final`. */
ZM_MUST_CHECK FILE *zm_dump_begin(FILE *final);
/* `start_ns`: a one-event call's start, or NULL for any other event. */
void zm_dump_event(FILE *out, const char *hostname, int64_t ns, const bt_event *event,
                   const int64_t *start_ns);

/* Passes the remaining lines on and closes; -1 if any write failed. */
ZM_MUST_CHECK int zm_dump_end(void);

#endif
