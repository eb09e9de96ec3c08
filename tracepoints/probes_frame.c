/* Instantiates the probes of provider zeprof_frame (in libzeprof_providers.so). */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#include "zeprof_frame.h"
