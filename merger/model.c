/* model: tolerant reconstruction of calls, device work and frames (model.h). */
#include "model.h"

#include "grow.h"
#include "intern.h"
#include "map.h"
#include "memory.h"
#include "shapes.h"
#include "traffic.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The spool's write and read buffer: a system call per 256 KiB of device timings (larger
 * buffers save few calls and cost a page fault per 4 KiB). */
#define ZM_MODEL_SPOOL_BUFFER (256 * 1024)

struct open_call {
    const char *function; /* Weak: interned */
    int64_t start_ns;
    uint64_t list; /* the entry's hCommandList, when it has one */
};

struct zm_thread {
    uint32_t host;
    int64_t pid, tid;
    int64_t last_ns;
    struct open_call *stack; /* Owned by this */
    size_t depth, capacity;
    /* The `transfer` and `kernel_shape` just read on this thread, for the append of call id
     * `detail_call_id` that follows them. */
    uint64_t detail_call_id, dst, src;
    bool has_transfer, has_shape;
    struct zm_kernel_shape shape;
    /* The queue group slot of the queue-creating call in flight on this thread (its `_desc`
     * comes after its entry), for its exit, which gives the handle. */
    const char *slot_function; /* Weak: interned; NULL when none */
    uint32_t slot_ordinal, slot_index;
};

/* An append awaiting its timing(s). Immediate lists execute once (execution 0): the append is
 * forgotten when its timing arrives. Regular lists may execute many times: kept for the host. */
struct zm_append {
    const char *name;  /* Weak: interned */
    int64_t entry_ns;  /* entry of the enclosing API call: the command cannot start before */
    int64_t append_ns; /* the append event itself: where the flow arrow starts */
    int64_t tid;
    uint64_t call_id, list;
    uint64_t bytes;     /* a copy's or fill's size, for the memory traffic */
    uint32_t direction; /* enum zm_traffic_direction, decided when the append was read */
    struct zm_kernel_shape shape;
    size_t next_free;            /* free list link (index + 1) */
    size_t list_prev, list_next; /* the other appends of the same list (index + 1, 0: none) */
};

/* One device timing as read, converted at the end of the host. */
struct spooled_timing {
    uint32_t device;  /* index into model->devices */
    uint32_t linked;  /* 1 when the append was found */
    const char *name; /* Weak: interned, alive for the whole run */
    int64_t pid, api_tid;
    uint64_t call_id, execution, queue;
    struct zm_engine engine; /* the queue's, when its creation was seen */
    uint64_t raw_start, raw_end;
    int64_t entry_ns; /* the append's API entry, INT64_MIN when the append was not seen */
    int64_t read_ns;  /* the device_timing event: the work was done by then */
    int64_t append_ns;
    uint64_t bytes;
    uint32_t direction;
    struct zm_kernel_shape shape;
};

/* The last Sysman reading of one device by one process (device_sample). */
struct zm_sampler {
    uint32_t host, label;
    int64_t pid;
    bool engine, energy; /* the reading had them */
    uint64_t engine_active_us, engine_timestamp_us, energy_uj, energy_timestamp_us;
};

struct zm_model {
    struct zm_intern names;   /* Owned by this */
    struct zm_span_sink sink; /* its context is Weak */
    uint64_t rate_ppm;
    struct zm_anomalies anomalies;
    uint64_t zeprof_events; /* events from zeprof's providers: none means another tracer */

    struct zm_host *hosts; /* Owned by this */
    uint32_t host_count, current_host;
    size_t host_capacity;

    struct zm_map threads;         /* (host<<32|pid, tid) -> index into thread_list */
    struct zm_thread *thread_list; /* Owned by this */
    size_t thread_count, thread_capacity;
    size_t last_thread;      /* index + 1 of the thread of the previous event, 0: none */
    struct zm_map processes; /* (host, pid) -> 1 */
    uint64_t replayed_processes, replayed_threads; /* of hosts read from partials */

    struct zm_map device_index; /* (host<<32|pid, handle) -> index into devices */
    struct zm_device *devices;  /* Owned by this */
    size_t device_count, device_capacity;
    struct zm_map label_index;      /* (host, interned uuid) -> label */
    struct zm_device_label *labels; /* Owned by this */
    size_t label_count, label_capacity;

    struct zm_map appends;         /* (host<<32|pid, call_id) -> index into append_list */
    struct zm_append *append_list; /* Owned by this */
    size_t append_count, append_capacity;
    size_t free_append;         /* head of the free list (index + 1), 0 when empty */
    struct zm_map list_appends; /* (host<<32|pid, list) -> first append of the list (index + 1) */
    /* (host<<32|pid, queue or immediate list) -> ordinal << 32 | index of its queue group slot */
    struct zm_map queue_engines;
    const char *queue_create, *immediate_create; /* Weak: interned function names */
    struct zm_memory memory;    /* live allocations of the current host: copy directions */
    struct zm_shapes shapes;    /* launch shapes carried forward per (thread, kernel name) */
    const char *mem_free;       /* Weak: interned "zeMemFree" */
    /* Weak: the three allocating functions, interned so that a call is told from them by its
     * pointer (three strcmp per API event were 0.5% of a --reduce) */
    const char *mem_alloc[3];
    const char *list_destroy, *list_reset; /* Weak: interned function names */

    FILE *spool; /* Owned by this: raw device timings of the current host */
    /* Owned by this: the spool's stdio buffer. stdio's own (4 KiB) made a write and a read
     * system call per 4 KiB of timings, 2 000 for a 200 000-event host: more system time than
     * all the rest of a --reduce. */
    char *spool_buffer;
    uint64_t spooled;

    struct zm_remote_index *frames; /* Owned by this: every frame mark, for placement */
    struct zm_sampler *samplers;    /* Owned by this */
    size_t sampler_count, sampler_capacity;
    char error[256];          /* why zm_model_event failed, when it is not memory or I/O */
};

static void forget_append(struct zm_model *model, uint64_t key, uint64_t call_id, size_t index);
static void forget_list(struct zm_model *model, int64_t pid, uint64_t list);

struct zm_model *zm_model_new(const struct zm_span_sink *sink, uint64_t rate_ppm)
{
    struct zm_model *model = malloc(sizeof(*model));
    if (!model)
        return NULL;
    *model = (struct zm_model){.sink = *sink, .rate_ppm = rate_ppm};
    zm_intern_init(&model->names);
    zm_map_init(&model->threads);
    zm_map_init(&model->processes);
    zm_map_init(&model->device_index);
    zm_map_init(&model->label_index);
    zm_map_init(&model->appends);
    zm_map_init(&model->list_appends);
    zm_map_init(&model->queue_engines);
    model->queue_create = zm_intern(&model->names, "zeCommandQueueCreate");
    model->immediate_create = zm_intern(&model->names, "zeCommandListCreateImmediate");
    model->list_destroy = zm_intern(&model->names, "zeCommandListDestroy");
    model->list_reset = zm_intern(&model->names, "zeCommandListReset");
    model->mem_free = zm_intern(&model->names, "zeMemFree");
    model->mem_alloc[0] = zm_intern(&model->names, "zeMemAllocHost");
    model->mem_alloc[1] = zm_intern(&model->names, "zeMemAllocDevice");
    model->mem_alloc[2] = zm_intern(&model->names, "zeMemAllocShared");
    zm_memory_init(&model->memory);
    zm_shapes_init(&model->shapes);
    model->frames = zm_remote_index_new();
    model->spool = tmpfile();
    model->spool_buffer = malloc(ZM_MODEL_SPOOL_BUFFER);
    if (!model->spool || !model->spool_buffer ||
        setvbuf(model->spool, model->spool_buffer, _IOFBF, ZM_MODEL_SPOOL_BUFFER) != 0 ||
        !model->frames || !model->list_destroy || !model->list_reset || !model->mem_free ||
        !model->mem_alloc[0] || !model->mem_alloc[1] || !model->mem_alloc[2]) {
        zm_model_free(model);
        return NULL;
    }
    return model;
}

void zm_model_free(struct zm_model *model)
{
    if (!model)
        return;
    for (size_t i = 0; i < model->thread_count; i++)
        free(model->thread_list[i].stack);
    free(model->thread_list);
    for (size_t i = 0; i < model->device_count; i++)
        zm_clock_release(&model->devices[i].clock);
    free(model->devices);
    free(model->labels);
    free(model->samplers);
    free(model->append_list);
    free(model->hosts);
    zm_map_release(&model->threads);
    zm_map_release(&model->processes);
    zm_map_release(&model->device_index);
    zm_map_release(&model->label_index);
    zm_map_release(&model->appends);
    zm_map_release(&model->list_appends);
    zm_map_release(&model->queue_engines);
    zm_memory_release(&model->memory);
    zm_shapes_release(&model->shapes);
    zm_intern_release(&model->names);
    zm_remote_index_free(model->frames);
    if (model->spool)
        fclose(model->spool);
    free(model->spool_buffer); /* after the fclose that last used it */
    free(model);
}

int zm_model_begin_host(struct zm_model *model, const char *hostname, const char *path)
{
    if (ZM_GROW(model->hosts, model->host_capacity, model->host_count + 1, 4) != 0)
        return -1;
    const char *name = zm_intern(&model->names, hostname ? hostname : "unknown-host");
    if (!name)
        return -1;
    model->current_host = model->host_count++;
    model->hosts[model->current_host] = (struct zm_host){.hostname = name, .path = path};
    if (model->sink.begin_host &&
        model->sink.begin_host(model->sink.context, model->current_host, name) != 0)
        return -1;
    return (int)model->current_host;
}

static struct zm_thread *thread_for(struct zm_model *model, int64_t pid, int64_t tid)
{
    /* Consecutive events mostly come from one thread: skip the hash lookup then. */
    if (model->last_thread) {
        struct zm_thread *last = &model->thread_list[model->last_thread - 1];
        if (last->tid == tid && last->pid == pid && last->host == model->current_host)
            return last;
    }
    uint64_t key = zm_map_process_key(model->current_host, pid);
    uint64_t *index = zm_map_find(&model->threads, key, (uint64_t)tid);
    if (index) {
        model->last_thread = (size_t)*index + 1;
        return &model->thread_list[*index];
    }
    if (ZM_GROW(model->thread_list, model->thread_capacity, model->thread_count + 1, 16) != 0)
        return NULL;
    if (zm_map_put(&model->threads, key, (uint64_t)tid, model->thread_count) != 0)
        return NULL;
    if (zm_map_put(&model->processes, model->current_host, (uint64_t)pid, 1) != 0)
        return NULL;
    struct zm_thread *thread = &model->thread_list[model->thread_count++];
    model->last_thread = model->thread_count;
    *thread = (struct zm_thread){.host = model->current_host, .pid = pid, .tid = tid};
    return thread;
}

static int complete_call(struct zm_model *model, const struct zm_thread *thread,
                         const char *function, int64_t start_ns, int64_t end_ns, uint32_t result,
                         bool synthetic)
{
    if (end_ns < start_ns) {
        model->anomalies.inverted_intervals++;
        end_ns = start_ns;
    }
    if (synthetic)
        model->anomalies.synthetic_closes++;
    if (!model->sink.api_span)
        return 0;
    struct zm_api_span span = {
        .host = thread->host,
        .pid = thread->pid,
        .tid = thread->tid,
        .function = function,
        .start_ns = start_ns,
        .end_ns = end_ns,
        .result = result,
        .synthetic = synthetic,
    };
    return model->sink.api_span(model->sink.context, &span);
}

/* Allocations and frees: where copies' pointers point (memory.h). */
static int track_memory(struct zm_model *model, const struct zm_event *event)
{
    uint64_t process = zm_map_process_key(model->current_host, event->pid);
    enum zm_memory_kind kind;
    if (event->kind == ZM_EVENT_API_ENTRY && event->function == model->mem_free) {
        zm_memory_free(&model->memory, process, event->address);
        return 0;
    }
    const char *function = event->function;
    if ((function != model->mem_alloc[0] && function != model->mem_alloc[1] &&
         function != model->mem_alloc[2]) ||
        !zm_memory_allocator(function, &kind))
        return 0;
    if (event->kind == ZM_EVENT_API_ENTRY)
        return zm_memory_alloc_entry(&model->memory, process, event->tid, kind, event->size);
    return zm_memory_alloc_exit(&model->memory, process, event->tid, event->result == 0,
                                event->address);
}

static int api_entry(struct zm_thread *thread, const struct zm_event *event)
{
    if (ZM_GROW(thread->stack, thread->capacity, thread->depth + 1, 16) != 0)
        return -1;
    thread->stack[thread->depth++] = (struct open_call){event->function, event->ns, event->list};
    return 0;
}

static int api_exit(struct zm_model *model, struct zm_thread *thread, const struct zm_event *event)
{
    /* The matching entry is normally on top; deeper means the exits above it were lost. */
    size_t match = thread->depth;
    while (match > 0 && thread->stack[match - 1].function != event->function)
        match--;
    if (match == 0) {
        model->anomalies.orphan_exits++;
        return 0;
    }
    while (thread->depth > match) {
        struct open_call lost = thread->stack[--thread->depth];
        if (complete_call(model, thread, lost.function, lost.start_ns, event->ns, 0, true) != 0)
            return -1;
    }
    struct open_call call = thread->stack[--thread->depth];
    if (call.function == thread->slot_function) {
        thread->slot_function = NULL;
        uint64_t slot = (uint64_t)thread->slot_ordinal << 32 | thread->slot_index;
        if (event->result == 0 && event->created &&
            zm_map_put(&model->queue_engines, zm_map_process_key(thread->host, thread->pid),
                       event->created, slot) != 0)
            return -1;
    }
    if ((call.function == model->list_destroy || call.function == model->list_reset) && call.list)
        forget_list(model, thread->pid, call.list);
    return complete_call(model, thread, call.function, call.start_ns, event->ns, event->result,
                         false);
}

/* The whole call in one event: complete at once, the stack untouched. */
static int api_call(struct zm_model *model, struct zm_thread *thread, const struct zm_event *event)
{
    return complete_call(model, thread, event->function, event->start_ns, event->ns, event->result,
                         false);
}

static struct zm_device *device_for(struct zm_model *model, int64_t pid, uint64_t handle)
{
    uint64_t *index =
        zm_map_find(&model->device_index, zm_map_process_key(model->current_host, pid), handle);
    return index ? &model->devices[*index] : NULL;
}

/* The label of the distinct device (uuid, interned) of the current host, added if new; -1 when
 * out of memory. Devices are told apart by uuid per host: two processes on one GPU share its
 * lanes. */
static long label_for(struct zm_model *model, const char *uuid, const char *name)
{
    uint64_t *label =
        zm_map_find(&model->label_index, model->current_host, (uint64_t)(uintptr_t)uuid);
    if (label && uuid[0])
        return (long)*label;
    if (ZM_GROW(model->labels, model->label_capacity, model->label_count + 1, 16) != 0)
        return -1;
    uint32_t index = (uint32_t)model->label_count++;
    model->labels[index] = (struct zm_device_label){model->current_host, uuid, name};
    if (zm_map_put(&model->label_index, model->current_host, (uint64_t)(uintptr_t)uuid, index) != 0)
        return -1;
    return index;
}

/* The previous Sysman reading of (host, pid, label): counters over an interval need two. */
static struct zm_sampler *sampler_for(struct zm_model *model, int64_t pid, uint32_t label)
{
    for (size_t i = 0; i < model->sampler_count; i++) {
        struct zm_sampler *sampler = &model->samplers[i];
        if (sampler->host == model->current_host && sampler->pid == pid && sampler->label == label)
            return sampler;
    }
    if (ZM_GROW(model->samplers, model->sampler_capacity, model->sampler_count + 1, 4) != 0)
        return NULL;
    struct zm_sampler *sampler = &model->samplers[model->sampler_count++];
    *sampler = (struct zm_sampler){.host = model->current_host, .pid = pid, .label = label};
    return sampler;
}

static int emit_counter(struct zm_model *model, struct zm_counter_sample *counter,
                        enum zm_counter_kind kind, int64_t interval_ns, double value)
{
    counter->kind = kind;
    counter->interval_ns = interval_ns;
    counter->value = value;
    return model->sink.counter ? model->sink.counter(model->sink.context, counter) : 0;
}

/* One Sysman reading (zeprof_sample:device_sample) becomes counter samples: frequency and memory
 * as they are; utilization and power from the difference with the previous reading of the same
 * device by the same process (none for the first, nor after a counter went backwards). */
static int device_sample(struct zm_model *model, const struct zm_event *event)
{
    enum { ENGINE = 1, FREQUENCY = 2, ENERGY = 4, MEMORY = 8 }; /* docs/tracepoints.md */
    const char *name = zm_intern(&model->names, event->name ? event->name : "device");
    const char *uuid = zm_intern(&model->names, event->uuid ? event->uuid : "");
    if (!name || !uuid)
        return -1;
    long label = label_for(model, uuid, name);
    struct zm_sampler *sampler = label < 0 ? NULL : sampler_for(model, event->pid, (uint32_t)label);
    if (!sampler)
        return -1;
    struct zm_counter_sample counter = {.host = model->current_host,
                                        .pid = event->pid,
                                        .device_label = (uint32_t)label,
                                        .device_name = model->labels[label].name,
                                        .time_ns = event->ns};
    if ((event->valid & FREQUENCY) &&
        emit_counter(model, &counter, ZM_COUNTER_FREQUENCY, 0, event->frequency_mhz) != 0)
        return -1;
    if ((event->valid & MEMORY) &&
        emit_counter(model, &counter, ZM_COUNTER_MEMORY, 0,
                     (double)event->memory_used / (1024.0 * 1024.0)) != 0)
        return -1;
    if ((event->valid & ENGINE) && sampler->engine &&
        event->engine_timestamp_us > sampler->engine_timestamp_us &&
        event->engine_active_us >= sampler->engine_active_us) {
        uint64_t span_us = event->engine_timestamp_us - sampler->engine_timestamp_us;
        double busy = 100.0 * (double)(event->engine_active_us - sampler->engine_active_us) /
                      (double)span_us;
        if (emit_counter(model, &counter, ZM_COUNTER_UTILIZATION, (int64_t)span_us * 1000,
                         busy > 100.0 ? 100.0 : busy) != 0)
            return -1;
    }
    if ((event->valid & ENERGY) && sampler->energy &&
        event->energy_timestamp_us > sampler->energy_timestamp_us &&
        event->energy_uj >= sampler->energy_uj) {
        uint64_t span_us = event->energy_timestamp_us - sampler->energy_timestamp_us;
        double watts = (double)(event->energy_uj - sampler->energy_uj) / (double)span_us;
        if (emit_counter(model, &counter, ZM_COUNTER_POWER, (int64_t)span_us * 1000, watts) != 0)
            return -1;
    }
    sampler->engine = event->valid & ENGINE;
    sampler->engine_active_us = event->engine_active_us;
    sampler->engine_timestamp_us = event->engine_timestamp_us;
    sampler->energy = event->valid & ENERGY;
    sampler->energy_uj = event->energy_uj;
    sampler->energy_timestamp_us = event->energy_timestamp_us;
    return 0;
}

static int device_properties(struct zm_model *model, const struct zm_event *event)
{
    struct zm_device *device = device_for(model, event->pid, event->device);
    if (device) /* repeated: the first one stands */
        return 0;
    if (ZM_GROW(model->devices, model->device_capacity, model->device_count + 1, 16) != 0)
        return -1;
    const char *name = zm_intern(&model->names, event->name ? event->name : "device");
    const char *uuid = zm_intern(&model->names, event->uuid ? event->uuid : "");
    if (!name || !uuid)
        return -1;
    long label_index = label_for(model, uuid, name);
    if (label_index < 0)
        return -1;
    if (zm_map_put(&model->device_index, zm_map_process_key(model->current_host, event->pid),
                   event->device, model->device_count) != 0)
        return -1;
    device = &model->devices[model->device_count++];
    *device = (struct zm_device){.host = model->current_host,
                                 .pid = event->pid,
                                 .handle = event->device,
                                 .label = (uint32_t)label_index,
                                 .name = name};
    zm_clock_init(&device->clock, event->timer_hz, event->kernel_timestamp_valid_bits);
    device->groups_known = event->groups_known;
    device->compute_groups = event->compute_groups;
    device->copy_groups = event->copy_groups;
    return 0;
}

/* A copy's or fill's direction, from the pointers of the `transfer` just before it as the
 * allocations read so far place them; none for other appends and without that event. */
static uint32_t append_direction(const struct zm_model *model, const struct zm_thread *thread,
                                 const struct zm_event *event)
{
    if (!thread->has_transfer || thread->detail_call_id != event->call_id)
        return ZM_TRAFFIC_NONE;
    uint64_t process = zm_map_process_key(model->current_host, event->pid);
    return zm_traffic_direction(event->append_kind,
                                zm_memory_kind_of(&model->memory, process, thread->dst),
                                zm_memory_kind_of(&model->memory, process, thread->src));
}

/* A launch's shape: the `kernel_shape` just before it, else the one its thread last recorded for
 * that kernel name (the shim records a shape only when it changed). */
static int append_shape(struct zm_model *model, const struct zm_thread *thread,
                        const struct zm_event *event, const char *name,
                        struct zm_kernel_shape *shape)
{
    uint64_t thread_index = (uint64_t)(thread - model->thread_list);
    if (thread->has_shape && thread->detail_call_id == event->call_id) {
        *shape = thread->shape;
        return zm_shapes_set(&model->shapes, name, thread_index, shape);
    }
    *shape = (struct zm_kernel_shape){0};
    if (event->append_kind && strcmp(event->append_kind, "kernel") == 0)
        *shape = zm_shapes_get(&model->shapes, name, thread_index);
    return 0;
}

/* `previous_ns`: the thread's event before this one. An append made by a one-event call comes
 * before its call event; the call, and so the command, began after the thread's previous event. */

static int append(struct zm_model *model, struct zm_thread *thread, const struct zm_event *event,
                  int64_t previous_ns)
{
    const char *name =
        zm_intern(&model->names, event->name && event->name[0] ? event->name : "append");
    if (!name)
        return -1;
    struct zm_kernel_shape shape;
    int shaped = append_shape(model, thread, event, name, &shape);
    uint32_t direction = append_direction(model, thread, event);
    thread->has_transfer = thread->has_shape = false;
    if (shaped != 0)
        return -1;
    size_t index;
    if (model->free_append) {
        index = model->free_append - 1;
        model->free_append = model->append_list[index].next_free;
    } else {
        if (ZM_GROW(model->append_list, model->append_capacity, model->append_count + 1, 16) != 0)
            return -1;
        index = model->append_count++;
    }
    int64_t entry_ns = thread->depth ? thread->stack[thread->depth - 1].start_ns : previous_ns;
    uint64_t key = zm_map_process_key(model->current_host, event->pid);
    model->append_list[index] = (struct zm_append){.name = name,
                                                   .entry_ns = entry_ns,
                                                   .append_ns = event->ns,
                                                   .tid = event->tid,
                                                   .call_id = event->call_id,
                                                   .list = event->list,
                                                   .bytes = event->bytes,
                                                   .direction = direction,
                                                   .shape = shape};
    uint64_t *old = zm_map_find(&model->appends, key, event->call_id);
    if (old) /* a reused call id: the newer append wins */
        forget_append(model, key, event->call_id, (size_t)*old);
    uint64_t *head = zm_map_find(&model->list_appends, key, event->list);
    if (head) {
        model->append_list[index].list_next = (size_t)*head;
        model->append_list[*head - 1].list_prev = index + 1;
    }
    if (zm_map_put(&model->list_appends, key, event->list, index + 1) != 0)
        return -1;
    return zm_map_put(&model->appends, key, event->call_id, index);
}

static void forget_append(struct zm_model *model, uint64_t key, uint64_t call_id, size_t index)
{
    struct zm_append *append = &model->append_list[index];
    zm_map_remove(&model->appends, key, call_id);
    if (append->list_prev) {
        model->append_list[append->list_prev - 1].list_next = append->list_next;
    } else if (append->list_next) {
        /* It was the list's first append (the one the map names): the next one is now. */
        uint64_t *head = zm_map_find(&model->list_appends, key, append->list);
        if (head)
            *head = append->list_next;
    } else {
        zm_map_remove(&model->list_appends, key, append->list);
    }
    if (append->list_next)
        model->append_list[append->list_next - 1].list_prev = append->list_prev;
    append->next_free = model->free_append;
    model->free_append = index + 1;
}

/* The list was destroyed or reset: none of its appends will execute again. */
static void forget_list(struct zm_model *model, int64_t pid, uint64_t list)
{
    uint64_t key = zm_map_process_key(model->current_host, pid);
    uint64_t *head;
    while ((head = zm_map_find(&model->list_appends, key, list)) != NULL) {
        size_t index = (size_t)*head - 1;
        forget_append(model, key, model->append_list[index].call_id, index);
    }
}

/* The engine of queue group slot `slot` (ordinal << 32 | index) of `device`, named by the kind of
 * its group when the device told the groups' properties. */
static struct zm_engine engine_of(const struct zm_device *device, uint64_t slot)
{
    struct zm_engine engine = {
        .known = true, .ordinal = (uint32_t)(slot >> 32), .index = (uint32_t)slot};
    if (device->groups_known && engine.ordinal < 32) {
        uint32_t bit = 1u << engine.ordinal;
        if (device->compute_groups & bit)
            engine.kind = ZM_ENGINE_COMPUTE;
        else if (device->copy_groups & bit)
            engine.kind = ZM_ENGINE_COPY;
    }
    return engine;
}

static int device_timing(struct zm_model *model, const struct zm_event *event)
{
    uint64_t key = zm_map_process_key(model->current_host, event->pid);
    uint64_t *found = zm_map_find(&model->appends, key, event->call_id);
    size_t index = found ? (size_t)*found : 0;
    bool immediate = event->execution == 0;
    if (event->status != 0) {
        model->anomalies.lost_timings++;
        if (found && immediate)
            forget_append(model, key, event->call_id, index);
        return 0;
    }
    struct zm_device *device = device_for(model, event->pid, event->device);
    if (!device) {
        model->anomalies.unanchored_timings++;
        if (found && immediate)
            forget_append(model, key, event->call_id, index);
        return 0;
    }
    struct spooled_timing record = {
        .device = (uint32_t)(device - model->devices),
        .pid = event->pid,
        .call_id = event->call_id,
        .execution = event->execution,
        .queue = event->queue,
        .raw_start = event->global_start,
        .raw_end = event->global_end,
        .read_ns = event->ns,
    };
    const uint64_t *slot = zm_map_find(&model->queue_engines, key, event->queue);
    if (slot)
        record.engine = engine_of(device, *slot);
    if (found) {
        const struct zm_append *source = &model->append_list[index];
        record.linked = 1;
        record.name = source->name;
        record.api_tid = source->tid;
        record.entry_ns = source->entry_ns;
        record.append_ns = source->append_ns;
        record.bytes = source->bytes;
        record.direction = source->direction;
        record.shape = source->shape;
        if (immediate)
            forget_append(model, key, event->call_id, index);
    } else {
        model->anomalies.unmatched_timings++;
        record.name = zm_intern(&model->names, "(unknown append)");
        if (!record.name)
            return -1;
        record.entry_ns = INT64_MIN;
    }
    if (fwrite(&record, sizeof(record), 1, model->spool) != 1)
        return -1;
    model->spooled++;
    return 0;
}

int zm_model_event(struct zm_model *model, const struct zm_event *event)
{
    struct zm_host *host = &model->hosts[model->current_host];
    if (!host->seen_event) {
        host->seen_event = true;
        host->first_ns = event->ns;
    }
    host->last_ns = event->ns;
    if (event->kind == ZM_EVENT_UNKNOWN) {
        model->anomalies.unknown_events++;
        return 0;
    }
    model->zeprof_events++;
    struct zm_thread *thread = thread_for(model, event->pid, event->tid);
    if (!thread)
        return -1;
    int64_t previous_ns = thread->last_ns;
    thread->last_ns = event->ns;
    struct zm_device *device;
    switch (event->kind) {
    case ZM_EVENT_API_ENTRY:
        if (track_memory(model, event) != 0)
            return -1;
        return api_entry(thread, event);
    case ZM_EVENT_API_EXIT:
        if (track_memory(model, event) != 0)
            return -1;
        return api_exit(model, thread, event);
    case ZM_EVENT_API_CALL:
        return api_call(model, thread, event);
    case ZM_EVENT_DEVICE_PROPERTIES:
        return device_properties(model, event);
    case ZM_EVENT_CLOCK_SAMPLE_BEGIN:
        device = device_for(model, event->pid, event->device);
        if (device)
            zm_clock_sample_begin(&device->clock, event->anchor, event->sample, event->ns);
        return 0;
    case ZM_EVENT_CLOCK_SAMPLE_END:
        device = device_for(model, event->pid, event->device);
        if (!device)
            return 0;
        return zm_clock_sample_end(&device->clock, event->anchor, event->sample,
                                   event->device_ticks, event->result, event->ns);
    case ZM_EVENT_APPEND:
        return append(model, thread, event, previous_ns);
    case ZM_EVENT_DEVICE_TIMING:
        return device_timing(model, event);
    case ZM_EVENT_TRANSFER: /* for the append that follows on this thread */
        if (thread->detail_call_id != event->call_id)
            thread->has_shape = false;
        thread->detail_call_id = event->call_id;
        thread->has_transfer = true;
        thread->dst = event->dst;
        thread->src = event->src;
        return 0;
    case ZM_EVENT_KERNEL_SHAPE:
        if (thread->detail_call_id != event->call_id)
            thread->has_transfer = false;
        thread->detail_call_id = event->call_id;
        thread->has_shape = true;
        thread->shape = event->shape;
        return 0;
    case ZM_EVENT_DEVICE_SAMPLE:
        return device_sample(model, event);
    case ZM_EVENT_FRAME: {
        struct zm_remote_key key = {event->session, event->worker, event->sequence};
        if (zm_remote_index_add(model->frames, event->frame_mark, &key, (int)model->current_host,
                                event->pid, event->ns) == 0)
            return 0;
        snprintf(model->error, sizeof(model->error), "%s", zm_remote_index_error(model->frames));
        return -1;
    }
    case ZM_EVENT_API_DESC:
        /* A queue's group slot, for the exit of the call creating it (api_exit). */
        if (event->queue_slot && (event->function == model->queue_create ||
                                  event->function == model->immediate_create)) {
            thread->slot_function = event->function;
            thread->slot_ordinal = event->queue_ordinal;
            thread->slot_index = event->queue_index;
        }
        return 0;
    default:
        return 0;
    }
}

void zm_model_discarded(struct zm_model *model, uint64_t count, bool packets)
{
    if (packets)
        model->anomalies.discarded_packets += count;
    else
        model->anomalies.discarded_events += count;
}

static int convert_spool(struct zm_model *model)
{
    if (model->spooled == 0)
        return 0;
    if (fflush(model->spool) != 0)
        return -1;
    rewind(model->spool);
    struct spooled_timing record;
    for (uint64_t i = 0; i < model->spooled; i++) {
        if (fread(&record, sizeof(record), 1, model->spool) != 1)
            return -1;
        const struct zm_device *device = &model->devices[record.device];
        /* An immediate list's command (execution 0) starts soon after its append, however late
         * its timing is read (a program may synchronize more than a wrap later): its append's
         * entry is the reference. A regular list's execution may come long after its append:
         * zm_clock_reference bounds that by the read. */
        int64_t reference = record.execution == 0 && record.entry_ns != INT64_MIN
                                ? record.entry_ns
                                : zm_clock_reference(&device->clock, record.entry_ns,
                                                     record.read_ns);
        struct zm_conversion conversion;
        zm_clock_convert(&device->clock, record.raw_start, record.raw_end, reference,
                         model->rate_ppm, &conversion);
        if (conversion.inverted)
            model->anomalies.inverted_intervals++;
        if (!conversion.anchored)
            model->anomalies.unanchored_timings++;
        if (!model->sink.device_span)
            continue;
        struct zm_device_span span = {
            .host = device->host,
            .pid = record.pid,
            .device_label = device->label,
            .device_name = device->name,
            .queue = record.queue,
            .engine = record.engine,
            .name = record.name,
            .anchored = conversion.anchored,
            .start_ns = conversion.start_ns,
            .end_ns = conversion.end_ns,
            .uncertainty_ns = conversion.uncertainty_ns,
            .duration_ns = conversion.duration_ns,
            .call_id = record.call_id,
            .execution = record.execution,
            .linked = record.linked != 0,
            .api_tid = record.api_tid,
            .append_ns = record.append_ns,
            .bytes = record.bytes,
            .direction = record.direction,
            .shape = record.shape,
        };
        if (model->sink.device_span(model->sink.context, &span) != 0)
            return -1;
    }
    rewind(model->spool);
    if (ftruncate(fileno(model->spool), 0) != 0)
        return -1;
    model->spooled = 0;
    return 0;
}

int zm_model_end_host(struct zm_model *model)
{
    for (size_t i = 0; i < model->thread_count; i++) {
        struct zm_thread *thread = &model->thread_list[i];
        if (thread->host != model->current_host)
            continue;
        while (thread->depth > 0) {
            struct open_call call = thread->stack[--thread->depth];
            if (complete_call(model, thread, call.function, call.start_ns, thread->last_ns, 0,
                              true) != 0)
                return -1;
        }
    }
    if (convert_spool(model) != 0)
        return -1;
    /* Appends are per host: whatever is left (never timed) is forgotten. */
    zm_map_release(&model->appends);
    zm_map_release(&model->list_appends);
    zm_map_release(&model->queue_engines); /* queues are per process, processes per host */
    model->append_count = 0;
    model->free_append = 0;
    zm_memory_release(&model->memory); /* allocations are per host too */
    if (model->sink.end_host)
        return model->sink.end_host(model->sink.context);
    return 0;
}

const char *zm_model_intern(struct zm_model *model, const char *text, size_t length)
{
    return zm_intern_n(&model->names, text, length);
}

const char *zm_model_error(const struct zm_model *model)
{
    return model->error;
}

uint64_t zm_model_zeprof_events(const struct zm_model *model)
{
    return model->zeprof_events;
}

const struct zm_anomalies *zm_model_anomalies(const struct zm_model *model)
{
    return &model->anomalies;
}

void zm_model_set_placement_anomalies(struct zm_model *model, uint64_t dropped_windows,
                                      uint64_t incomplete_frames)
{
    model->anomalies.dropped_windows = dropped_windows;
    model->anomalies.incomplete_frames = incomplete_frames;
}

uint32_t zm_model_host_count(const struct zm_model *model)
{
    return model->host_count;
}

const struct zm_host *zm_model_host(const struct zm_model *model, uint32_t host)
{
    return &model->hosts[host];
}

size_t zm_model_device_count(const struct zm_model *model)
{
    return model->device_count;
}

const struct zm_device *zm_model_device(const struct zm_model *model, size_t device)
{
    return &model->devices[device];
}

size_t zm_model_device_label_count(const struct zm_model *model)
{
    return model->label_count;
}

const struct zm_device_label *zm_model_device_label(const struct zm_model *model, uint32_t label)
{
    return &model->labels[label];
}

const struct zm_remote_index *zm_model_frames(const struct zm_model *model)
{
    return model->frames;
}

size_t zm_model_pending_appends(const struct zm_model *model)
{
    return model->appends.count;
}

size_t zm_model_process_count(const struct zm_model *model)
{
    return model->processes.count + (size_t)model->replayed_processes;
}

size_t zm_model_thread_count(const struct zm_model *model)
{
    return model->threads.count + (size_t)model->replayed_threads;
}

const struct zm_span_sink *zm_model_sink(const struct zm_model *model)
{
    return &model->sink;
}

int zm_model_replay_host(struct zm_model *model, const struct zm_replayed_host *replayed)
{
    struct zm_host *host = &model->hosts[model->current_host];
    host->first_ns = replayed->first_ns;
    host->last_ns = replayed->last_ns;
    host->seen_event = replayed->seen_event;
    host->spans_omitted = replayed->spans_omitted;
    model->zeprof_events += replayed->zeprof_events;
    model->replayed_processes += replayed->processes;
    model->replayed_threads += replayed->threads;
    uint64_t *sum = (uint64_t *)&model->anomalies;
    const uint64_t *add = (const uint64_t *)&replayed->anomalies;
    for (size_t i = 0; i < sizeof(model->anomalies) / sizeof(uint64_t); i++)
        sum[i] += add[i];
    return 0;
}

int zm_model_replay_label(struct zm_model *model, const char *uuid, const char *name,
                          uint32_t *label)
{
    const char *interned_uuid = zm_intern(&model->names, uuid);
    const char *interned_name = zm_intern(&model->names, name);
    if (!interned_uuid || !interned_name ||
        ZM_GROW(model->labels, model->label_capacity, model->label_count + 1, 16) != 0)
        return -1;
    *label = (uint32_t)model->label_count++;
    model->labels[*label] =
        (struct zm_device_label){model->current_host, interned_uuid, interned_name};
    return 0;
}

int zm_model_replay_device(struct zm_model *model, int64_t pid, uint64_t handle, uint32_t label,
                           const char *name, const struct zm_clock *clock)
{
    const char *interned = zm_intern(&model->names, name);
    if (!interned ||
        ZM_GROW(model->devices, model->device_capacity, model->device_count + 1, 16) != 0)
        return -1;
    struct zm_device *device = &model->devices[model->device_count];
    *device = (struct zm_device){.host = model->current_host,
                                 .pid = pid,
                                 .handle = handle,
                                 .label = label,
                                 .name = interned};
    zm_clock_init(&device->clock, clock->timer_hz, clock->kernel_bits);
    model->device_count++;
    for (size_t i = 0; i < clock->count; i++)
        if (zm_clock_add_anchor(&device->clock, &clock->anchors[i]) != 0)
            return -1;
    return 0;
}

int zm_model_replay_frame(struct zm_model *model, enum zm_remote_mark mark,
                          const struct zm_remote_key *key, int64_t pid, int64_t time_ns)
{
    if (zm_remote_index_add(model->frames, mark, key, (int)model->current_host, pid, time_ns) == 0)
        return 0;
    snprintf(model->error, sizeof(model->error), "%s", zm_remote_index_error(model->frames));
    return -1;
}
