/* Instantiates the probes of provider zeprof_device (in libzeprof_providers.so). */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#include "zeprof_device.h"

/*
 * Registers zeprof_device before the API providers. LTTng numbers a channel's events in the
 * order their providers register and gives the first 31 a 4-byte header instead of 16: the
 * append and device_timing events, as frequent as the appends, belong among them. Providers
 * register from their constructors, in link order, and meson links the generated API providers
 * first; a constructor with a priority runs before all of those. It calls the provider's own
 * registration function (lttng-ust 2.13's <lttng/ust-tracepoint-event.h> defines it in this
 * file), which counts its calls: the default constructor's later call does nothing, and the
 * matching destructor below keeps the count balanced.
 */
static void zeprof_device_register_first(void) __attribute__((constructor(101)));
static void zeprof_device_register_first(void)
{
    lttng_ust__events_init__zeprof_device();
}

static void zeprof_device_unregister_last(void) __attribute__((destructor(101)));
static void zeprof_device_unregister_last(void)
{
    lttng_ust__events_exit__zeprof_device();
}
