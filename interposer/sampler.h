/*
 * sampler.h: device telemetry (zeprof --sample): one thread reads Sysman (zes) every
 * ZEPROF_SAMPLE_MS milliseconds and fires zeprof_sample:device_sample per device.
 *
 * The first reading is taken before the application's first successful zeInit (or
 * zeInitDrivers) returns, the last one at exit, so the sampled window holds all the work of the
 * process.
 * Guarantees: the application's results are untouched (the thread only reads, through the real
 * loader's functions with its guard raised, so its calls are never traced nor hooked; device
 * discovery runs on the thread too); a Sysman call that never returns delays zeInit by one second
 * and the exit by one second, once; the thread is stopped and joined at exit after one last
 * sample; a forked child does not sample. Without Sysman (every zes call fails or is missing), one
 * line on stderr and nothing more. With ZEPROF_SAMPLE_LOCK=FILE only the process that takes an
 * exclusive lock on FILE first samples (one sampler per node under a job).
 */
#ifndef ZEPROF_SAMPLER_H
#define ZEPROF_SAMPLER_H

/* After the application's exported zeInit or zeInitDrivers succeeded (any thread, any number of
 * times): starts the sampler once, when ZEPROF_SAMPLE_MS asks for it. */
void zeprof_sampler_start(void);

#endif /* ZEPROF_SAMPLER_H */
