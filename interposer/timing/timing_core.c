/*
 * timing_core.c: the engine's core: whether it runs, call ids, and the process's exit and fork.
 *
 * The engine switches itself on at its first use (timing_enabled, from any hook): off when
 * ZEPROF_PROFILE=0, or when the real loader lacks any function the engine calls, or until the
 * application's own zeInit/zeInitDrivers made the real loader's API usable. Switching on registers
 * the exit drain (atexit, so it runs before library destructors, while LTTng still works) and the
 * fork handler (a forked child starts with an empty engine: timing_registry_forget_after_fork).
 *
 * The exit drain is a final drain of every list that never hangs the exit: its locks are timed.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compat/api_ready.h"
#include "guard.h"
#include "timing_internal.h"
#include "zeprof_api.h"

static pthread_once_t enable_once = PTHREAD_ONCE_INIT;
static bool enabled;
static _Atomic uint64_t call_sequence;

/* seconds from now on CLOCK_REALTIME (what the timed locks take). */
static struct timespec seconds_from_now(time_t seconds)
{
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += seconds;
    return deadline;
}

static void drain_at_exit(void)
{
    /* Do not hang the exit on a thread that still holds the registry or a list (it may never
     * return): every lock here is timed, with one deadline for the whole drain, and what stays
     * busy is skipped. */
    struct timespec deadline = seconds_from_now(1);
    if (pthread_rwlock_timedrdlock(&timing_registry_lock, &deadline) != 0)
        return;
    for (struct timing_list *list = timing_registry_first_list(); list;
         list = list->next_in_registry) {
        if (pthread_mutex_timedlock(&list->mutex, &deadline) != 0)
            continue;
        timing_drain_list_locked(list, true, 0);
        pthread_mutex_unlock(&list->mutex);
    }
    timing_anchor_refresh_locked(true);
    pthread_rwlock_unlock(&timing_registry_lock);
}

static void at_exit(void)
{
    /* Not called from a wrapper: raise the guard ourselves, so that the drain's Level Zero calls
     * are never traced as the application's. */
    zeprof_guard_enter();
    drain_at_exit();
    zeprof_guard_leave();
}

static void enable_init(void)
{
    const char *profile = getenv("ZEPROF_PROFILE");

    enabled = !(profile && strcmp(profile, "0") == 0);
    /* Everything the engine calls must exist in the real loader, or it stays off. */
    if (!zeprof_real.zeEventPoolCreate || !zeprof_real.zeEventCreate ||
        !zeprof_real.zeEventDestroy || !zeprof_real.zeEventPoolDestroy ||
        !zeprof_real.zeEventQueryStatus || !zeprof_real.zeEventQueryKernelTimestamp ||
        !zeprof_real.zeEventHostReset || !zeprof_real.zeEventHostSynchronize ||
        !zeprof_real.zeCommandListAppendSignalEvent || !zeprof_real.zeCommandListAppendBarrier ||
        !zeprof_real.zeDeviceGetProperties || !zeprof_real.zeDeviceGetGlobalTimestamps ||
        !zeprof_real.zeDriverGet || !zeprof_real.zeDeviceGet || !zeprof_real.zeCommandListCreate ||
        !zeprof_real.zeCommandListClose || !zeprof_real.zeCommandListReset ||
        !zeprof_real.zeCommandListDestroy || !zeprof_real.zeCommandListAppendEventReset ||
        !zeprof_real.zeCommandListAppendQueryKernelTimestamps || !zeprof_real.zeMemAllocHost ||
        !zeprof_real.zeMemFree)
        enabled = false;
    /* Registered at first use, so it runs before library destructors: LTTng still works. A
     * forked child starts with an empty engine (it inherits the handler, which then drains only
     * what the child itself created). */
    if (enabled) {
        atexit(at_exit);
        pthread_atfork(NULL, NULL, timing_registry_forget_after_fork);
    }
}

bool timing_enabled(void)
{
    pthread_once(&enable_once, enable_init);
    /* The engine calls the real loader's exported API, which only an exported zeInit or
     * zeInitDrivers makes usable (compat/api_ready.h). */
    return enabled && zeprof_api_ready();
}

uint64_t timing_next_call_id(void)
{
    return atomic_fetch_add(&call_sequence, 1) + 1;
}
