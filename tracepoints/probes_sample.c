/* Instantiates the probes of provider zeprof_sample (in libzeprof_providers_sample.so, loaded by
 * the shim when its sampler starts). */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#include "zeprof_sample.h"
