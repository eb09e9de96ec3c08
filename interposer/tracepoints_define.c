/*
 * tracepoints_define.c: the shim's tracepoint definitions, in one translation unit.
 *
 * The probes are not linked into the shim: they live in libzeprof_providers.so, which the shim
 * dlopens at initialization (shim_init.c). So the shim itself does not depend on liblttng-ust,
 * and a machine without LTTng-UST still runs the application (untraced) instead of failing to
 * preload the shim. With LTTNG_UST_TRACEPOINT_PROBE_DYNAMIC_LINKAGE the definitions register
 * through liblttng-ust-tracepoint, itself dlopen()ed by <lttng/tracepoint.h> when present.
 */
#define LTTNG_UST_TRACEPOINT_DEFINE
#define LTTNG_UST_TRACEPOINT_PROBE_DYNAMIC_LINKAGE

#include "zeprof_ze.h"
#include "zeprof_zet.h"
#include "zeprof_zes.h"
#include "zeprof_zel.h"
#include "zeprof_device.h"
#include "zeprof_frame.h"
#include "zeprof_sample.h"
