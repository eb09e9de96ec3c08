/*
 * sim.h: private header of the simulated Level Zero driver (libzesim.so).
 *
 * The driver models an Intel-like GPU: devices with their own clock, asynchronous queues run by
 * worker threads, regular and immediate command lists, events, fences and a ground-truth log.
 *
 * Guarantees shared by all modules:
 * - Every handle given to the application is registered in the live-handle registry
 *   (sim_handle.c) with its kind; every entry point validates its handles there first, so NULL,
 *   stale or foreign handles get an error code instead of a crash.
 * - One global lock (sim_lock) guards every piece of state that the workers and the host share:
 *   event, semaphore and fence states, queue progress, list in-flight counts, the timestamp-query
 *   cost counters. Two condition variables (on CLOCK_MONOTONIC) announce changes: sim_cond for
 *   event and semaphore states, sim_progress_cond for queue progress (a submission queued or
 *   finished, its fence, list in-flight counts, a queue closing). Two, so that a kernel signalling
 *   its event does not wake a host thread waiting for its queue: on a GPU that signal costs the
 *   device nothing, and with one variable every signal cost the simulated engine a context switch
 *   (microseconds between commands that a GPU would not show, most of all with a tracer's events).
 *   Work itself (copies, kernels) runs outside the lock.
 * - No function here is exported: the library is built with hidden visibility and only the table
 *   getters in sim_tables.c are visible. Internal names start with sim_ so that nothing can bind
 *   to the preloaded zeprof shim, whose symbols are named like the API.
 */
#ifndef ZESIM_SIM_H
#define ZESIM_SIM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <level_zero/ze_api.h>
#include <level_zero/zes_api.h>

/* Level Zero 1.7 flags that the installed 1.4 headers lack. */
/* The version of the Level Zero headers this driver is built against: spec 1.4 headers (Debian
 * 12) lack ZE_API_VERSION_CURRENT_M, newer ones define it. Code for entry points newer than 1.4 is
 * compiled only when the headers declare them. */
#ifdef ZE_API_VERSION_CURRENT_M
#define SIM_HEADERS_AT_LEAST(major, minor) (ZE_API_VERSION_CURRENT_M >= ZE_MAKE_VERSION(major, minor))
#else
#define SIM_HEADERS_AT_LEAST(major, minor) (ZE_MAKE_VERSION(1, 4) >= ZE_MAKE_VERSION(major, minor))
#endif

#define SIM_COMMAND_LIST_FLAG_IN_ORDER ((ze_command_list_flags_t)(1u << 3))
#define SIM_COMMAND_QUEUE_FLAG_IN_ORDER ((ze_command_queue_flags_t)(1u << 1))

#define SIM_MAX_DEVICES 16
#define SIM_MAX_KERNEL_ARGS 3 /* the most a known kernel takes (zesim_vadd_f32) */
#define SIM_MAX_ARG_BYTES 8
#define SIM_GROUP_COUNT 2 /* queue groups: 0 compute+copy, 1 copy-only */
#define SIM_COMPUTE_QUEUES 4
#define SIM_COPY_QUEUES 2
#define SIM_MAX_FILL_PATTERN 128

enum sim_kind {
    SIM_KIND_DRIVER = 1,
    SIM_KIND_DEVICE,
    SIM_KIND_CONTEXT,
    SIM_KIND_QUEUE,
    SIM_KIND_LIST,
    SIM_KIND_EVENT_POOL,
    SIM_KIND_EVENT,
    SIM_KIND_FENCE,
    SIM_KIND_MODULE,
    SIM_KIND_BUILD_LOG,
    SIM_KIND_KERNEL,
    SIM_KIND_SEMAPHORE,
};

/* ---- configuration (sim_driver.c), read once at the first init ---- */
struct sim_config {
    uint32_t devices;        /* ZESIM_DEVICES */
    uint64_t timer_hz;       /* ZESIM_TIMER_HZ */
    uint32_t kernel_ts_bits; /* ZESIM_KERNEL_TS_BITS */
    uint64_t ns_per_group;   /* ZESIM_NS_PER_GROUP */
    uint64_t qkt_cost_ns;    /* ZESIM_QKT_COST_NS */
    uint64_t append_ns;      /* ZESIM_APPEND_NS */
    uint32_t hang_props;     /* ZESIM_HANG_DEVICE_PROPERTIES */
};
extern struct sim_config sim_config;

/* ---- global state ---- */
extern pthread_mutex_t sim_lock;
extern pthread_cond_t sim_cond;          /* event and semaphore states */
extern pthread_cond_t sim_progress_cond; /* queue progress, fences, list in-flight counts */

struct sim_device {
    uint32_t index;
    char name[64];
    uint8_t uuid[ZE_MAX_DEVICE_UUID_SIZE];
    uint64_t epoch_ticks;   /* device ticks at the driver's host base time */
    uint64_t context_epoch; /* context timestamps count from here */
};

struct sim_driver {
    uint8_t uuid[ZE_MAX_DRIVER_UUID_SIZE];
    uint32_t device_count;
    struct sim_device devices[SIM_MAX_DEVICES];
    atomic_bool context_created; /* an application is using the driver (the loader is done) */
};
extern struct sim_driver sim_driver;

struct sim_context {
    struct sim_driver *driver; /* Weak */
};

struct sim_event_pool {
    struct sim_context *context; /* Weak */
    ze_event_pool_flags_t flags;
    /* Counter-based (spec 1.8 ze_event_pool_counter_based_exp_desc_t in pNext): its events
     * reflect the last append that used them, are never reset and never host-signalled. */
    bool counter_based;
    uint32_t count;
    uint32_t live_events;     /* under sim_lock */
    struct sim_event **slots; /* Owned array; events are owned by the application */
};

struct sim_event {
    struct sim_event_pool *pool; /* Weak */
    uint32_t index;
    /* All under sim_lock. */
    bool signaled;
    bool has_timestamps;
    uint32_t device_index; /* device whose clock gave the timestamps */
    uint64_t start_ticks;  /* untruncated device ticks */
    uint64_t end_ticks;
    /* Counter-based events: the latest use, claimed when its submission is queued. Only that
     * command's completion signals the event; an earlier use completing later leaves it as is. */
    const struct sim_queue *latest_queue;
    uint64_t latest_sequence;
    const struct sim_cmd *latest_cmd;
};

struct sim_queue;

struct sim_fence {
    struct sim_queue *queue; /* Weak */
    bool signaled;           /* under sim_lock */
};

struct sim_module {
    struct sim_context *context; /* Weak */
    struct sim_device *device;   /* Weak */
    size_t binary_size;
    uint8_t *binary; /* Owned copy of the application's binary */
};

struct sim_build_log {
    int unused;
};

enum sim_kernel_kind {
    SIM_KERNEL_GENERIC,
    SIM_KERNEL_SPIN,
    SIM_KERNEL_FILL_U32,
    SIM_KERNEL_VADD_F32,
};

/* What a launch needs of a kernel; copied at append time (arguments are captured then). */
struct sim_kernel_state {
    enum sim_kernel_kind kind;
    char name[256];
    uint32_t group_size[3];
    uint8_t args[SIM_MAX_KERNEL_ARGS][SIM_MAX_ARG_BYTES];
};

struct sim_kernel {
    struct sim_module *module; /* Weak */
    uint32_t id;
    pthread_mutex_t mutex; /* guards state against concurrent setters */
    struct sim_kernel_state state;
};

/* ---- commands (sim_list.c builds them, sim_engine.c runs them) ---- */
enum sim_cmd_kind {
    SIM_CMD_KERNEL,
    SIM_CMD_KERNEL_INDIRECT,
    SIM_CMD_KERNELS_MULTI_INDIRECT,
    SIM_CMD_COPY,
    SIM_CMD_COPY_REGION,
    SIM_CMD_FILL,
    SIM_CMD_BARRIER,
    SIM_CMD_SIGNAL,
    SIM_CMD_WAIT,
    SIM_CMD_EVENT_RESET,
    SIM_CMD_QUERY_TIMESTAMPS,
    SIM_CMD_GLOBAL_TIMESTAMP,
    SIM_CMD_SEMAPHORE_SIGNAL,
    SIM_CMD_SEMAPHORE_WAIT,
};

/* An imported external semaphore (spec 1.12): a counter that signals set and waits await. */
struct sim_semaphore {
    struct sim_device *device; /* Weak */
    uint64_t value;            /* under sim_lock */
};

/* Timestamp-query cost bookkeeping state of a SIM_CMD_QUERY_TIMESTAMPS command. */
enum sim_qkt_state { SIM_QKT_NONE, SIM_QKT_PENDING, SIM_QKT_COMPLETED };

struct sim_cmd {
    enum sim_cmd_kind kind;
    const char *function;     /* API function that appended it (static string) */
    struct sim_event *signal; /* Weak; may be NULL */
    uint32_t wait_count;
    struct sim_event **waits;     /* Owned array of weak events */
    enum sim_qkt_state qkt_state; /* under sim_lock */
    union {
        struct {
            struct sim_kernel_state kernel;
            ze_group_count_t groups;
            const ze_group_count_t *indirect; /* Weak; read at execution */
        } launch;
        struct {
            uint32_t count;
            struct sim_kernel_state *kernels;  /* Owned */
            const uint32_t *count_buffer;      /* Weak */
            const ze_group_count_t *arguments; /* Weak */
        } multi;
        struct {
            void *dst;
            const void *src;
            size_t size;
        } copy;
        struct {
            void *dst;
            const void *src;
            ze_copy_region_t dst_region, src_region;
            uint32_t dst_pitch, dst_slice_pitch, src_pitch, src_slice_pitch;
        } region;
        struct {
            void *dst;
            size_t size;
            size_t pattern_size;
            uint8_t pattern[SIM_MAX_FILL_PATTERN];
        } fill;
        struct {
            struct sim_event *event; /* Weak: the event to reset */
        } reset;
        struct {
            uint32_t count;
            struct sim_event **events; /* Owned array */
            void *dst;
            size_t *offsets; /* Owned copy or NULL */
        } query;
        struct {
            uint64_t *dst;
        } timestamp;
        struct {
            uint32_t count;
            struct sim_semaphore **semaphores; /* Owned array of weak semaphores */
            uint64_t *values;                  /* Owned: the value to signal or wait for */
        } semaphore;
    } u;
};

struct sim_list {
    struct sim_context *context; /* Weak */
    struct sim_device *device;   /* Weak */
    uint32_t ordinal;            /* queue group */
    bool immediate;
    bool in_order;
    bool closed;
    uint32_t inflight;     /* executions queued or running; under sim_lock */
    pthread_mutex_t mutex; /* serialises appends from several threads */
    uint32_t cmd_count, cmd_capacity;
    struct sim_cmd **cmds;   /* Owned (regular lists only) */
    struct sim_queue *queue; /* Owned (immediate lists only) */
};

/* A unit of queued work: either regular lists (borrowed, in-flight counted) or one owned command.
 */
struct sim_submission {
    struct sim_submission *next;
    uint32_t list_count;
    struct sim_list **lists; /* Owned array of weak lists */
    struct sim_cmd *cmd;     /* Owned; immediate lists */
    struct sim_fence *fence; /* Weak */
    uint64_t sequence;
};

struct sim_queue {
    struct sim_context *context; /* Weak */
    struct sim_device *device;   /* Weak */
    uint32_t ordinal, index;
    ze_command_queue_mode_t mode;
    ze_command_queue_flags_t flags;
    void *handle; /* what the truth log calls it: the queue or the immediate list */
    pthread_t worker;
    /* Under sim_lock. */
    struct sim_submission *head, *tail;
    uint64_t submitted, completed;
    bool shutdown;
};

/* ---- sim_handle.c ---- */
void sim_handle_add(void *handle, enum sim_kind kind);
void sim_handle_remove(void *handle);
bool sim_handle_is(const void *handle, enum sim_kind kind);
void sim_handle_release_all(void);
/* Validate a handle: NULL -> INVALID_NULL_HANDLE, unknown -> INVALID_ARGUMENT. */
ze_result_t sim_handle_check(const void *handle, enum sim_kind kind);

/* ---- sim_clock.c ---- */
void sim_clock_init(void);
uint64_t sim_clock_host_ns(void);     /* CLOCK_MONOTONIC */
uint64_t sim_clock_host_raw_ns(void); /* CLOCK_MONOTONIC_RAW */
uint64_t sim_clock_ticks_at(const struct sim_device *device, uint64_t host_ns);
uint64_t sim_clock_kernel_mask(void);
void sim_clock_busy_wait_ns(uint64_t ns);
void sim_clock_sleep_until(uint64_t host_ns);
/* Absolute CLOCK_MONOTONIC deadline for a Level Zero timeout; UINT64_MAX means none. */
uint64_t sim_clock_deadline(uint64_t timeout_ns);
/* Wait on `cond` (sim_lock held) until deadline; returns false once the deadline passed. */
bool sim_clock_cond_wait(pthread_cond_t *cond, uint64_t deadline);

/* ---- sim_truth.c ---- */
void sim_truth_open(void);
void sim_truth_close(void);
bool sim_truth_enabled(void);
/* The SIMD width zeKernelGetProperties reports for every kernel (maxSubgroupSize). */
#define SIM_KERNEL_SIMD 32u
/* A kernel execution's launch shape, for its truth line. */
struct sim_truth_shape {
    ze_group_count_t groups;
    uint32_t group_size[3];
};
/* `engine`: the queue's group ordinal and index (the line's "engine": "ordinal.index"); `shape`:
 * a kernel's launch shape (its line then has group_count, group_size and simd), or NULL. */
void sim_truth_record(uint32_t device, const char *kind, const char *name, uint64_t start_ns,
                      uint64_t end_ns, uint64_t start_ticks, uint64_t end_ticks, const void *list,
                      const void *queue, const uint32_t engine[2],
                      const struct sim_truth_shape *shape);

/* ---- sim_memory.c ---- */
/* Bytes accessible from ptr to the end of its allocation, 0 when ptr is in no allocation. */
size_t sim_memory_span(const void *ptr);
void sim_memory_release_all(void);
/* Bytes of the device's live device and shared allocations. */
uint64_t sim_memory_device_bytes(const struct sim_device *device);

/* ---- sim_event.c ---- */
/* Called by workers with sim_lock held. */
void sim_event_signal_locked(struct sim_event *event, uint32_t device, uint64_t start_ticks,
                             uint64_t end_ticks);
void sim_event_reset_locked(struct sim_event *event);
/* A submission is queued (sim_lock held): it becomes the latest use of every counter-based event
 * its commands signal, which are unsignalled until that use completes. */
void sim_event_claim_locked(const struct sim_queue *queue, const struct sim_submission *submission);
/* A command completed (sim_lock held): signal its event, unless the event is counter-based and a
 * later use has claimed it since. */
void sim_event_complete_locked(const struct sim_queue *queue, uint64_t sequence,
                               const struct sim_cmd *cmd, uint64_t start_ticks,
                               uint64_t end_ticks);
/* Whether an event may be the signal event of an append to this list (counter-based events:
 * in-order lists only). */
ze_result_t sim_event_check_signal(const struct sim_event *event, const struct sim_list *list);
void sim_event_timestamp_result_locked(const struct sim_event *event,
                                       ze_kernel_timestamp_result_t *result);
/* A host synchronization proved completion: completed timestamp queries stop costing. */
void sim_qkt_observe_locked(void);
/* Timestamp-query cost model: an append pays for every query appended and not yet observed. */
void sim_qkt_charge_append(struct sim_cmd *cmd);
void sim_qkt_completed_locked(struct sim_cmd *cmd);
void sim_qkt_forget_locked(struct sim_cmd *cmd);

/* ---- sim_sysman.c ---- */
/* At the driver's initialization: reads ZES_ENABLE_SYSMAN, starts the energy counter. */
void sim_sysman_init(void);
/* Whether the zes tables are filled (ZESIM_SYSMAN is not 0); read by the table getters. */
bool sim_sysman_tables_wanted(void);
/* A worker starts or ends work (kernels, copies, fills) on its queue's device, at now_ns. */
void sim_sysman_busy_begin(const struct sim_queue *queue, uint64_t now_ns);
void sim_sysman_busy_end(const struct sim_queue *queue, uint64_t now_ns);

/* ---- sim_semaphore.c ---- */
/* Runs a semaphore command on a worker: a signal sets each value, a wait blocks until each
 * semaphore reaches its value (or the queue shuts down). */
void sim_semaphore_run(struct sim_queue *queue, const struct sim_cmd *cmd);

/* ---- sim_list.c ---- */
void sim_cmd_free(struct sim_cmd *cmd);
/* The shared start of every append: validates the list, the signal event (counter-based events on
 * in-order lists only) and the wait list. */
ze_result_t sim_list_check_append(ze_command_list_handle_t handle, ze_event_handle_t signal,
                                  uint32_t wait_count, ze_event_handle_t *waits);
struct sim_cmd *sim_list_new_cmd(enum sim_cmd_kind kind, const char *function,
                                 ze_event_handle_t signal, uint32_t wait_count,
                                 ze_event_handle_t *waits);
/* Recorded (regular) or submitted at once (immediate); takes ownership of cmd. */
ze_result_t sim_list_commit(ze_command_list_handle_t handle, struct sim_cmd *cmd);
void sim_kernel_snapshot(struct sim_kernel *kernel, struct sim_kernel_state *state);

/* ---- sim_host_time.c ---- */
/* ZESIM_HOST_TIME=1: the table getters put timed wrappers of a few entry points in the tables
 * (zesim_host_time.h); the extension function ZESIM_EXT_HOST_TIME is sim_ext_host_time. */
bool sim_host_time_enabled(void);
struct _ze_command_list_dditable_t;
struct _ze_event_dditable_t;
struct _ze_event_pool_dditable_t;
void sim_host_time_list_table(struct _ze_command_list_dditable_t *table);
void sim_host_time_event_table(struct _ze_event_dditable_t *table);
void sim_host_time_event_pool_table(struct _ze_event_pool_dditable_t *table);
struct zesim_host_time;
ze_result_t sim_ext_host_time(ze_driver_handle_t driver, struct zesim_host_time **record);

/* ---- sim_queue.c / sim_engine.c ---- */
/* Validates desc against the device's queue groups, starts the worker. truth_handle names the
 * queue in the truth log (the application's queue or immediate list). */
ze_result_t sim_queue_open(struct sim_context *context, struct sim_device *device,
                           const ze_command_queue_desc_t *desc, void *truth_handle,
                           struct sim_queue **out);
/* Lets the queued work finish (waits on events that never come are abandoned), joins, frees. */
void sim_queue_close(struct sim_queue *queue);
/* Appends to the queue's FIFO (takes sim_lock). Returns the submission's sequence number. */
uint64_t sim_queue_submit(struct sim_queue *queue, struct sim_submission *submission);
/* Executes closed regular lists on a queue (checks them first): zeCommandQueueExecuteCommandLists
 * on an application queue, zeCommandListImmediateAppendCommandListsExp on an immediate list's. */
ze_result_t sim_queue_execute(struct sim_queue *queue, uint32_t count,
                              ze_command_list_handle_t *lists, struct sim_fence *fence);
/* Wait until `sequence` completed; sim_lock held. */
bool sim_queue_wait_locked(struct sim_queue *queue, uint64_t sequence, uint64_t deadline);
void *sim_engine_run(void *queue);
uint32_t sim_engine_live_workers(void);

/* ---- table entry points, grouped by module; registered in sim_tables.c ---- */
#include "sim_entry.h"

#endif
