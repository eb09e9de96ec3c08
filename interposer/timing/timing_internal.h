/*
 * timing_internal.h: private header of the device-timing engine (interposer/timing/).
 *
 * The engine measures every profiled append on the device with a tracer-owned kernel-timestamp
 * event ("inj") that it substitutes for the application's signal event, reads on the host at the
 * next drain anchor and recycles (docs/timing.md explains the whole mechanism).
 *
 * Modules and what each owns:
 * - timing_map.c: uint64 -> pointer hash maps (owns its table, borrows the values).
 * - timing_registry.c: the global registry of what the engine knows about the application's
 *   objects (contexts, devices, command lists, kernels, timestamp pools and events); owns every
 *   record it hands out; one rwlock guards the maps.
 * - timing_pool.c: per-context pools of 64 injected events and their free list.
 * - timing_slots.c: slots (one per profiled append) in fixed-size chunks per command list and
 *   the per-list live list.
 * - timing_stash.c: a list's injected events: taking one for a new slot (the list's stash, else
 *   the pool) and keeping or recycling them when the list's slots are released.
 * - timing_drain.c: reading completed slots, emitting device_timing, recycling.
 * - timing_runs.c: regular-list executions ("runs"): builds the tracer's harvest list submitted
 *   after each execution, so that a resubmission never waits, and reads finished runs.
 * - timing_instance.c: a run's life, the claim state machine (free, claimed, in flight), and the
 *   execute hooks' claim and release of every list of one call; owns the run records.
 * - timing_anchor.c: device_properties and clock anchors.
 * - timing_core.c: the engine's switch (ZEPROF_PROFILE, the real loader), call ids, the exit
 *   drain and the fork handler it registers at first use.
 * - timing_hooks.c / timing_append.c: the hook functions the generated wrappers call.
 *
 * Lock order (never take an earlier one while holding a later one):
 *   registry rwlock -> list mutex -> app-event mutex -> context mutex.
 * No lock is held across an application-visible Level Zero call (the real append or execute).
 */
#ifndef ZEPROF_TIMING_INTERNAL_H
#define ZEPROF_TIMING_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <level_zero/ze_api.h>

/* Level Zero 1.7 flags that the installed 1.4 headers lack (same bit values as the spec). */
#define TIMING_COMMAND_LIST_FLAG_IN_ORDER ((ze_command_list_flags_t)(1u << 3))
#define TIMING_COMMAND_QUEUE_FLAG_IN_ORDER ((ze_command_queue_flags_t)(1u << 1))
/* Level Zero 1.6: timestamps already mapped to host time; the engine cannot read them as ticks. */
#define TIMING_EVENT_POOL_FLAG_KERNEL_MAPPED_TIMESTAMP ((ze_event_pool_flags_t)(1u << 3))
/* Level Zero 1.8: ze_event_pool_counter_based_exp_desc_t's structure type (the 1.4 headers lack
 * it; an application built against newer headers may pass it to a shim built against them). */
#define TIMING_STRUCTURE_TYPE_COUNTER_BASED_EVENT_POOL_EXP_DESC ((ze_structure_type_t)0x00020014)

#define TIMING_POOL_EVENTS 64u
#define TIMING_CHUNK_SLOTS 64u

/* device_timing status values (docs/tracepoints.md). */
#define TIMING_STATUS_READ 0u
#define TIMING_STATUS_LOST 1u

/* A Level Zero handle as the 64-bit integer the zeprof_device tracepoints carry. */
static inline uint64_t timing_handle_bits(const void *handle)
{
    return (uint64_t)(uintptr_t)handle;
}

/* ------------------------------------------------------------------------------------------ */
/* timing_map.c: open-addressing map from a non-zero uint64 key to a pointer.                  */

struct timing_map {
    uint64_t *keys;  /* Owned; 0 = empty */
    void **values;   /* Owned array; values are borrowed */
    size_t capacity; /* power of two, or 0 */
    size_t count;
};

void timing_map_init(struct timing_map *map);
void timing_map_release(struct timing_map *map);
void *timing_map_get(const struct timing_map *map, uint64_t key);
/* Returns 0, or -1 when memory ran out (the map is then unchanged). Replaces an existing value. */
int timing_map_put(struct timing_map *map, uint64_t key, void *value);
/* Returns the removed value or NULL. */
void *timing_map_remove(struct timing_map *map, uint64_t key);
/* Calls fn for every entry; fn must not modify the map. */
void timing_map_for_each(const struct timing_map *map,
                         void (*fn)(uint64_t key, void *value, void *user), void *user);

/* ------------------------------------------------------------------------------------------ */
/* timing_pool.c                                                                               */

struct timing_pool;

struct timing_inj {
    ze_event_handle_t event;  /* Owned by its pool's owner (the context record) */
    struct timing_pool *pool; /* Weak */
    struct timing_inj *next_free;
};

struct timing_pool {
    ze_event_pool_handle_t handle; /* Owned */
    struct timing_pool *next;
    uint32_t created; /* events created in injs[0..created) */
    struct timing_inj injs[TIMING_POOL_EVENTS];
};

struct timing_context {
    ze_context_handle_t handle;   /* Weak: the application's */
    pthread_mutex_t mutex;        /* guards pools and free_list */
    struct timing_pool *pools;    /* Owned */
    struct timing_inj *free_list; /* Weak (points into pools) */
    uint64_t pool_failures;       /* pool creations that failed */
};

struct timing_context *timing_context_new(ze_context_handle_t handle);
/* Destroys every event, then every pool (Level Zero's order), then the record. */
void timing_context_free(struct timing_context *context);
/* A reset (never-signalled or host-reset) event, or NULL when none can be had. */
struct timing_inj *timing_pool_take(struct timing_context *context);
/* inj must be unsignalled (reset or never submitted). */
void timing_pool_give_back(struct timing_context *context, struct timing_inj *inj);

/* ------------------------------------------------------------------------------------------ */
/* timing_registry.c                                                                           */

struct timing_device {
    ze_device_handle_t handle; /* Weak */
    uint64_t timer_hz;
    uint32_t kernel_timestamp_valid_bits;
    _Atomic uint64_t last_anchor_ns; /* CLOCK_MONOTONIC_COARSE, only to rate-limit anchors */
};

struct timing_slot;
struct timing_chunk;
struct timing_run;

struct timing_list {
    ze_command_list_handle_t handle;    /* Weak */
    ze_context_handle_t context_handle; /* Weak */
    struct timing_context *context;     /* Weak: owned by the registry */
    struct timing_device *device;       /* Weak: owned by the registry */
    uint32_t ordinal;                   /* the queue group it was created for */
    bool immediate;
    bool in_order;
    pthread_mutex_t mutex; /* guards everything below */
    /* Live slots in append order (timing_slots.c). */
    struct timing_slot *head;
    struct timing_slot *tail;
    struct timing_chunk *newest_chunk; /* Owned; older chunks are owned by their live slots */
    /* Regular lists (timing_instance.c, timing_runs.c): one run per execution. */
    uint64_t executions;     /* executions claimed so far (the last one's number) */
    struct timing_run *runs;      /* Owned: in flight, oldest claim first */
    struct timing_run *runs_tail; /* Weak: the newest claim */
    struct timing_run *free_runs; /* Owned: ready for reuse */
    /* Injected events of earlier slots, kept across list resets for the next appends (Owned,
     * linked by next_free, possibly signalled: regular lists never need them reset). */
    struct timing_inj *stash;
    uint64_t layout;         /* bumped whenever the armed slots change: harvests are rebuilt */
    /* Injected events of a regular list stay signalled between executions (nothing waits on
     * them; each signal overwrites the timestamps). untracked: an execution ran without a done
     * marker, so nothing is known of the events until the list is reset or destroyed. */
    bool untracked;
    bool no_harvest; /* the queue group refuses timestamp queries (copy-only): read on the host */
    /* Registry iteration (under the registry lock). */
    struct timing_list *prev_in_registry;
    struct timing_list *next_in_registry;
};

/* An application event from a KERNEL_TIMESTAMP pool: never swapped, read in place. */
struct timing_app_event {
    ze_event_handle_t handle; /* Weak */
    ze_context_handle_t context_handle;
    /* From a counter-based pool: reused without a reset by design, never reset nor host-signalled
     * (the driver refuses both). */
    bool counter_based;
    /* Under timing_app_event_mutex: the slot waiting to read this event, and its list. */
    struct timing_slot *pending;
    struct timing_list *pending_list;
};

/* A kernel the application created: its name, and what its launches' shapes need
 * (timing_shape.c). group_size is changed by zeKernelSetGroupSize's hook under the registry's
 * read lock, so it is read and written with atomics. */
struct timing_kernel {
    uint64_t name_hash;     /* of name: each thread's cache of recorded shapes is keyed by it */
    uint32_t group_size[3]; /* the kernel's required group size until set; 0: not known */
    uint32_t simd;          /* required subgroup size, else the maximum; 0: not reported */
    char name[];
};

/* Launch shapes (timing_shape.c), under timing_registry_lock (read). */
void timing_shape_set_group_size(ze_kernel_handle_t kernel, uint32_t x, uint32_t y, uint32_t z);
/* Records `kernel_shape` for the append `call_id` when this thread has not recorded that shape
 * for a kernel of that name last. `groups` NULL: not known here (indirect launches). */
void timing_shape_record(const struct timing_kernel *kernel, uint64_t call_id,
                         const ze_group_count_t *groups);
/* In a forked child (its only thread): the shapes the parent's thread recorded are not in the
 * child's trace, so the child records its own from scratch. */
void timing_shape_forget_after_fork(void);

extern pthread_rwlock_t timing_registry_lock;
extern pthread_mutex_t timing_app_event_mutex;

/* All under timing_registry_lock (read for lookups, write for changes). */
struct timing_list *timing_registry_list(ze_command_list_handle_t handle);
struct timing_device *timing_registry_device(ze_device_handle_t handle);
const char *timing_registry_kernel_name(ze_kernel_handle_t handle);
struct timing_kernel *timing_registry_kernel(ze_kernel_handle_t handle);
struct timing_app_event *timing_registry_app_event(ze_event_handle_t handle);
/* The context of an application timestamp pool, or NULL when the pool is not one. */
ze_context_handle_t timing_registry_timestamp_pool_context(ze_event_pool_handle_t handle);
struct timing_list *timing_registry_first_list(void);

/* Write-locked changes. Each returns 0 or -1 (out of memory: the object is simply not tracked). */
struct timing_context *timing_registry_context_get_or_add(ze_context_handle_t handle);
struct timing_device *timing_registry_device_get_or_add(ze_device_handle_t handle, bool *added);
int timing_registry_add_list(struct timing_list *list);
struct timing_list *timing_registry_remove_list(ze_command_list_handle_t handle);
int timing_registry_add_kernel(ze_kernel_handle_t handle, const char *name,
                               const ze_kernel_properties_t *properties);
void timing_registry_remove_kernel(ze_kernel_handle_t handle);
int timing_registry_add_timestamp_pool(ze_event_pool_handle_t handle, ze_context_handle_t ctx);
void timing_registry_remove_timestamp_pool(ze_event_pool_handle_t handle);
int timing_registry_add_app_event(ze_event_handle_t handle, ze_context_handle_t ctx,
                                  bool counter_based);
/* Counter-based timestamp pools (their events get timing_app_event.counter_based). */
int timing_registry_add_counter_based_pool(ze_event_pool_handle_t handle, ze_context_handle_t ctx);
bool timing_registry_counter_based_pool(ze_event_pool_handle_t handle);
void timing_registry_remove_counter_based_pool(ze_event_pool_handle_t handle);
/* Every event (and pool) the application created and has not destroyed: only events known alive
 * are ever swapped, anything else goes to the driver untouched (it reports the error). */
bool timing_registry_event_alive(ze_event_handle_t handle);
int timing_registry_add_live_event(ze_event_handle_t handle, ze_context_handle_t ctx);
void timing_registry_remove_live_event(ze_event_handle_t handle);
int timing_registry_add_live_pool(ze_event_pool_handle_t handle, ze_context_handle_t ctx);
void timing_registry_remove_live_pool(ze_event_pool_handle_t handle);
ze_context_handle_t timing_registry_live_pool_context(ze_event_pool_handle_t handle);
/* The child of a fork: forget the parent's records without touching them (their Level Zero
 * objects and locks belong to the parent); the engine starts empty. */
void timing_registry_forget_after_fork(void);
struct timing_app_event *timing_registry_remove_app_event(ze_event_handle_t handle);
/* Removes and returns the context record (its lists must already be gone). */
struct timing_context *timing_registry_remove_context(ze_context_handle_t handle);
/* Forgets the application's pools and events of a context that is being destroyed. */
void timing_registry_forget_app_objects(ze_context_handle_t ctx);
void timing_registry_for_each_device(void (*fn)(struct timing_device *device, void *user),
                                     void *user);

/* ------------------------------------------------------------------------------------------ */
/* timing_slots.c                                                                              */

struct timing_slot {
    struct timing_slot *prev; /* in-order predecessor on the list */
    struct timing_slot *next;
    struct timing_chunk *chunk;   /* Weak */
    struct timing_inj *inj;       /* Owned while live; NULL when reading app_event */
    ze_event_handle_t app_event;  /* the app's timestamp event, read in place (no inj) */
    ze_event_handle_t user_event; /* the application's event, re-exposed after the append */
    uint64_t call_id;
    /* Regular lists, application timestamp events: the execution that signals it next, its
     * queue, and the last execution read (or reported lost). */
    uint64_t app_execution;
    ze_command_queue_handle_t app_queue;
    uint64_t read_execution;
    bool armed;              /* the real append succeeded */
    bool lost;               /* app timestamp event re-signalled before a read */
    bool read;               /* immediate lists: timing emitted, slot held (below) */
    /* A re-exposing barrier waits on inj: inj may be reset only once that barrier has run,
     * which a later command's completion proves (the in-order successor; see timing_drain.c). */
    bool waited_on;
};

struct timing_chunk {
    uint32_t used; /* slots handed out from this chunk (bump allocation) */
    uint32_t live; /* of those, still live */
    struct timing_slot slots[TIMING_CHUNK_SLOTS];
};

/* Under list->mutex. A zeroed slot linked at the tail, or NULL when memory ran out. */
struct timing_slot *timing_slot_add(struct timing_list *list);
/* Unlinks and frees the slot (its inj must have been handed on already). */
void timing_slot_remove(struct timing_list *list, struct timing_slot *slot);
/* Frees every slot and the newest chunk. */
void timing_slots_release(struct timing_list *list);

/* ------------------------------------------------------------------------------------------ */
/* timing_stash.c: a list's injected events                                                    */

/* Under list->mutex: release every slot (after a final drain), recycling what is safe. */
void timing_release_slots_locked(struct timing_list *list);
/* Under list->mutex: an injected event for a new slot (a regular list's stash first). */
struct timing_inj *timing_take_inj_locked(struct timing_list *list);
/* Under list->mutex: an injected event that was never submitted goes back. */
void timing_give_back_inj_locked(struct timing_list *list, struct timing_inj *inj);
/* Under list->mutex: the stash goes back to the pool, reset (list destroy). */
void timing_release_stash_locked(struct timing_list *list);

/* ------------------------------------------------------------------------------------------ */
/* timing_drain.c                                                                              */

enum timing_read_outcome {
    TIMING_READ_OK,
    TIMING_READ_NOT_READY,
    TIMING_READ_LOST,
};

/* Every live list: read what has completed. Lists another thread holds are skipped. */
void timing_drain_all(void);
/* Under list->mutex. final: whatever cannot be read now is reported lost (reset, destroy, exit);
 * wait_ns: how long a final drain may wait for the tracer's own markers of executions that the
 * application already knows complete (0 at exit). */
void timing_drain_list_locked(struct timing_list *list, bool final, uint64_t wait_ns);
/* Under list->mutex: an append's drain: at most max completed slots, and only once the list's
 * oldest slot is a chunk behind its newest (timing_drain.c). */
void timing_drain_some_locked(struct timing_list *list, unsigned max);
/* Resolve the slot waiting on an application timestamp event (read now, or lost). */
void timing_resolve_app_event(ze_event_handle_t event);
/* Reading one slot's event on the host, and emitting device_timing. */
enum timing_read_outcome timing_slot_read(const struct timing_slot *slot,
                                          ze_kernel_timestamp_result_t *result);
void timing_emit(const struct timing_list *list, const struct timing_slot *slot,
                 uint64_t execution, const void *queue, enum timing_read_outcome outcome,
                 const ze_kernel_timestamp_result_t *result);
/* The app-event record no longer waits on this slot. */
void timing_clear_app_pending(struct timing_slot *slot);

/* ------------------------------------------------------------------------------------------ */
/* timing_runs.c: regular-list executions: tracer lists, reading finished runs                 */

/* Under list->mutex: read the runs whose done marker is signalled. final: wait up to wait_ns for
 * the rest, report what stays unread as lost. */
void timing_runs_drain_locked(struct timing_list *list, bool final, uint64_t wait_ns);
/* Under list->mutex: read the in-flight runs whose done marker is signalled, oldest first; max:
 * how many to look at; stop_at_busy: stop at the first still in flight (a claim's O(1) look). */
void timing_runs_poll_locked(struct timing_list *list, unsigned max, bool stop_at_busy);
/* Under list->mutex: the app's timestamp event of a regular-list slot is about to change. */
void timing_runs_resolve_app_slot_locked(struct timing_list *list, struct timing_slot *slot);
/* Every armed injected slot of the list reported lost for this run. */
void timing_run_emit_lost(const struct timing_list *list, const struct timing_run *run);
/* Under list->mutex: the run's harvest list for the list's current slots (rebuilt when they
 * changed), or false (then the list may be marked no_harvest: copy-only). */
bool timing_run_harvest_ready_locked(struct timing_list *list, struct timing_run *run);
/* Under list->mutex: the run's one-barrier list signalling done, or false. */
bool timing_run_done_list_ready_locked(struct timing_list *list, struct timing_run *run);

/* ------------------------------------------------------------------------------------------ */
/* timing_instance.c: a regular-list execution's run record, the claim state machine           */

enum run_state {
    RUN_FREE = 0,  /* reusable */
    RUN_CLAIMED,   /* claimed by an execute pre hook, not yet submitted */
    RUN_SUBMITTED, /* in flight until done is seen signalled */
};

struct timing_run {
    struct timing_run *next;
    enum run_state state;
    uint64_t execution;
    ze_command_queue_handle_t queue; /* Weak */
    pthread_t claimer;
    bool harvest;   /* results will hold this execution's timestamps */
    bool lost;      /* its timings are reported lost when it is finished */
    bool tracked;   /* a done marker follows it */
    bool abandoned; /* a final drain gave up on it: it may still run; never reused or freed */
    struct timing_inj *done;                  /* Owned: signalled by the tracer list's end */
    ze_command_list_handle_t harvest_list;    /* Owned */
    uint64_t harvest_layout;                  /* list->layout harvest_list was built for */
    ze_command_list_handle_t done_list;       /* Owned: one barrier signalling done */
    ze_kernel_timestamp_result_t *results;    /* Owned: host memory the device writes */
    uint32_t capacity;
};

/* One execute call: the application's lists with the tracer's list after each profiled one. */
struct timing_execute;
/* Pre hook: claims a run for every profiled regular list, never waiting, and puts the array for
 * the driver in *count and *lists (the application's are kept). NULL: no list is profiled, the
 * arguments are untouched. */
struct timing_execute *timing_execute_begin(ze_command_queue_handle_t queue, uint32_t *count,
                                            ze_command_list_handle_t **lists);
/* Post hook: gives the application's array back; the runs are in flight (submitted) or never
 * ran. Frees execute. */
void timing_execute_end(struct timing_execute *execute, bool submitted, uint32_t *count,
                        ze_command_list_handle_t **lists);
/* Under list->mutex: build the harvest for the next execution ahead of time (list close), so that
 * the execute itself only claims. */
void timing_runs_prepare_locked(struct timing_list *list);
/* Under list->mutex: regular list reset (keep: runs are reused) or destroy (free everything). */
void timing_runs_release_locked(struct timing_list *list, bool destroy);
/* Under list->mutex: the run at *link (in flight; previous: the one before it, or NULL) moves to
 * the free stack. */
void timing_run_retire_locked(struct timing_list *list, struct timing_run **link,
                              struct timing_run *previous);
/* No execution of the list can still signal its injected events (none in flight or abandoned,
 * none untracked). */
bool timing_runs_quiet_locked(const struct timing_list *list);

/* ------------------------------------------------------------------------------------------ */
/* timing_anchor.c                                                                             */

/* device_properties once (at discovery) and a first anchor. */
void timing_anchor_discover(struct timing_device *device);
/* A new anchor for each device whose last one is older than the refresh period. */
void timing_anchor_refresh(bool force);
/* The same, under the registry lock the caller holds (the exit drain's timed one). */
void timing_anchor_refresh_locked(bool force);

/* ------------------------------------------------------------------------------------------ */
/* timing_core.c                                                                               */

/* True when device timing is on (ZEPROF_PROFILE unset or not "0") and the engine is usable. The
 * first call registers the exit drain and the fork handler. */
bool timing_enabled(void);
/* The engine's own per-process call id (ties a device timing to its append). */
uint64_t timing_next_call_id(void);

/* timing_append.c: the profiling hooks of appends that hooks.list does not name, called by the
 * generated timing_derived.c (interposer/gen/classify.py); `function` names what was appended. */
struct zeprof_hook_ctx;
void timing_append_pre_generic(ze_command_list_handle_t list, ze_event_handle_t *signal,
                               struct zeprof_hook_ctx *ctx);
void timing_append_post_generic(ze_command_list_handle_t list, ze_event_handle_t *signal,
                                const char *function, struct zeprof_hook_ctx *ctx,
                                ze_result_t result);
/* How long list reset and destroy wait for the tracer's own lists to finish. */
#define TIMING_RELEASE_WAIT_NS UINT64_C(1000000000)

#endif /* ZEPROF_TIMING_INTERNAL_H */
