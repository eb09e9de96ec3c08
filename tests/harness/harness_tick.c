/*
 * harness_tick: fires the zeprof_harness:tick tracepoint N times (argument 1, default 10) and exits
 * at once. Being short-lived is the point: it checks that the recording harness makes a program
 * wait for its tracer's registration, so not one event is lost.
 */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "harness_tick_tp.h"

#include <stdlib.h>

int main(int argc, char **argv)
{
	int count = argc > 1 ? atoi(argv[1]) : 10;

	for (int sequence = 0; sequence < count; sequence++)
		lttng_ust_tracepoint(zeprof_harness, tick, sequence);
	return 0;
}
