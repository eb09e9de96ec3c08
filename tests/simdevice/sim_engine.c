/*
 * sim_engine.c: the worker threads that play the device's engines.
 *
 * Each queue's worker takes submissions in FIFO order and runs their commands one after another:
 * it waits for the command's wait events, does the work on real memory, takes the start and end
 * instants from CLOCK_MONOTONIC (device ticks derive from them, sim_clock.c), writes the truth
 * line, and signals the command's event with that command's own timestamps. A wait that can never
 * end (the queue is being destroyed) is abandoned rather than hanging the process.
 * Kernels: zesim_spin runs its argument in nanoseconds; zesim_fill_u32 and zesim_vadd_f32 compute
 * one element per work item (clamped to the allocation, so a too-large grid cannot crash the
 * process); every kernel takes at least ZESIM_NS_PER_GROUP per work group.
 */
#include <stdlib.h>
#include <string.h>

#include "sim.h"

static uint32_t live_workers;

uint32_t sim_engine_live_workers(void)
{
    return __atomic_load_n(&live_workers, __ATOMIC_ACQUIRE);
}

struct sim_span {
    uint64_t start_ns, end_ns;
};

static uint64_t item_count(const struct sim_kernel_state *kernel, const ze_group_count_t *groups)
{
    return (uint64_t)groups->groupCountX * groups->groupCountY * groups->groupCountZ *
           kernel->group_size[0] * kernel->group_size[1] * kernel->group_size[2];
}

static void *arg_pointer(const struct sim_kernel_state *kernel, int index)
{
    void *ptr;
    memcpy(&ptr, kernel->args[index], sizeof(ptr));
    return ptr;
}

static void run_kernel_body(const struct sim_kernel_state *kernel, const ze_group_count_t *groups)
{
    uint64_t items = item_count(kernel, groups);
    switch (kernel->kind) {
    case SIM_KERNEL_FILL_U32: {
        uint32_t *out = arg_pointer(kernel, 0);
        uint32_t value;
        memcpy(&value, kernel->args[1], sizeof(value));
        uint64_t n = sim_memory_span(out) / sizeof(uint32_t);
        n = n < items ? n : items;
        for (uint64_t i = 0; i < n; i++)
            out[i] = value;
        break;
    }
    case SIM_KERNEL_VADD_F32: {
        const float *a = arg_pointer(kernel, 0), *b = arg_pointer(kernel, 1);
        float *c = arg_pointer(kernel, 2);
        uint64_t n = items;
        size_t spans[3] = {sim_memory_span(a), sim_memory_span(b), sim_memory_span(c)};
        for (int k = 0; k < 3; k++)
            n = spans[k] / sizeof(float) < n ? spans[k] / sizeof(float) : n;
        for (uint64_t i = 0; i < n; i++)
            c[i] = a[i] + b[i];
        break;
    }
    case SIM_KERNEL_SPIN:
    case SIM_KERNEL_GENERIC:
        break;
    }
}

static struct sim_span run_kernel(const struct sim_kernel_state *kernel,
                                  const ze_group_count_t *groups)
{
    struct sim_span span;
    span.start_ns = sim_clock_host_ns();
    run_kernel_body(kernel, groups);
    uint64_t group_total =
        (uint64_t)groups->groupCountX * groups->groupCountY * groups->groupCountZ;
    uint64_t duration = group_total * sim_config.ns_per_group;
    if (kernel->kind == SIM_KERNEL_SPIN)
        memcpy(&duration, kernel->args[0], sizeof(duration));
    sim_clock_sleep_until(span.start_ns + duration);
    span.end_ns = sim_clock_host_ns();
    return span;
}

static void copy_region(const struct sim_cmd *cmd)
{
    const ze_copy_region_t *d = &cmd->u.region.dst_region, *s = &cmd->u.region.src_region;
    uint8_t *dst = cmd->u.region.dst;
    const uint8_t *src = cmd->u.region.src;
    for (uint32_t z = 0; z < d->depth; z++) {
        for (uint32_t y = 0; y < d->height; y++) {
            size_t dst_offset = (size_t)(d->originZ + z) * cmd->u.region.dst_slice_pitch +
                                (size_t)(d->originY + y) * cmd->u.region.dst_pitch + d->originX;
            size_t src_offset = (size_t)(s->originZ + z) * cmd->u.region.src_slice_pitch +
                                (size_t)(s->originY + y) * cmd->u.region.src_pitch + s->originX;
            memmove(dst + dst_offset, src + src_offset, d->width);
        }
    }
}

static void fill(const struct sim_cmd *cmd)
{
    uint8_t *dst = cmd->u.fill.dst;
    size_t pattern_size = cmd->u.fill.pattern_size;
    for (size_t offset = 0; offset < cmd->u.fill.size; offset += pattern_size) {
        size_t n =
            cmd->u.fill.size - offset < pattern_size ? cmd->u.fill.size - offset : pattern_size;
        memcpy(dst + offset, cmd->u.fill.pattern, n);
    }
}

/* Copy engines move about 16 bytes per nanosecond. */
static void bandwidth_delay(uint64_t start_ns, size_t bytes)
{
    sim_clock_sleep_until(start_ns + bytes / 16);
}

/* `shape`: a kernel's launch shape, NULL for other commands. */
static void record(const struct sim_queue *queue, const void *list, const char *kind,
                   const char *name, struct sim_span span, const struct sim_truth_shape *shape)
{
    if (!sim_truth_enabled())
        return;
    sim_truth_record(queue->device->index, kind, name, span.start_ns, span.end_ns,
                     sim_clock_ticks_at(queue->device, span.start_ns),
                     sim_clock_ticks_at(queue->device, span.end_ns), list, queue->handle,
                     (const uint32_t[2]){queue->ordinal, queue->index}, shape);
}

static struct sim_truth_shape shape_of(const struct sim_kernel_state *kernel,
                                       const ze_group_count_t *groups)
{
    return (struct sim_truth_shape){
        *groups, {kernel->group_size[0], kernel->group_size[1], kernel->group_size[2]}};
}

static void wait_events(struct sim_queue *queue, const struct sim_cmd *cmd)
{
    if (cmd->wait_count == 0)
        return;
    pthread_mutex_lock(&sim_lock);
    for (uint32_t i = 0; i < cmd->wait_count; i++) {
        while (!cmd->waits[i]->signaled && !queue->shutdown)
            pthread_cond_wait(&sim_cond, &sim_lock);
    }
    pthread_mutex_unlock(&sim_lock);
}

static void run_multi(struct sim_queue *queue, const void *list, const struct sim_cmd *cmd,
                      struct sim_span *span)
{
    uint32_t count = *cmd->u.multi.count_buffer;
    if (count > cmd->u.multi.count)
        count = cmd->u.multi.count;
    span->start_ns = sim_clock_host_ns();
    for (uint32_t i = 0; i < count; i++) {
        const struct sim_kernel_state *kernel = &cmd->u.multi.kernels[i];
        ze_group_count_t groups = cmd->u.multi.arguments[i];
        struct sim_truth_shape shape = shape_of(kernel, &groups);
        record(queue, list, "kernel", kernel->name, run_kernel(kernel, &groups), &shape);
    }
    span->end_ns = sim_clock_host_ns();
}

static void run_cmd(struct sim_queue *queue, uint64_t sequence, const void *list,
                    struct sim_cmd *cmd)
{
    wait_events(queue, cmd);
    struct sim_span span = {0, 0};
    /* Work keeps an engine busy (Sysman's engine activity, sim_sysman.c); waits, signals and
     * barriers do not. */
    bool work = cmd->kind == SIM_CMD_KERNEL || cmd->kind == SIM_CMD_KERNEL_INDIRECT ||
                cmd->kind == SIM_CMD_KERNELS_MULTI_INDIRECT || cmd->kind == SIM_CMD_COPY ||
                cmd->kind == SIM_CMD_COPY_REGION || cmd->kind == SIM_CMD_FILL;
    if (work)
        sim_sysman_busy_begin(queue, sim_clock_host_ns());
    const char *kind = NULL; /* NULL: the command wrote its own truth lines */
    const char *name = cmd->function;
    struct sim_truth_shape launch;
    const struct sim_truth_shape *shape = NULL; /* kernels: the launch's shape */
    switch (cmd->kind) {
    case SIM_CMD_KERNEL:
    case SIM_CMD_KERNEL_INDIRECT: {
        ze_group_count_t groups =
            cmd->kind == SIM_CMD_KERNEL ? cmd->u.launch.groups : *cmd->u.launch.indirect;
        span = run_kernel(&cmd->u.launch.kernel, &groups);
        launch = shape_of(&cmd->u.launch.kernel, &groups);
        shape = &launch;
        kind = "kernel";
        name = cmd->u.launch.kernel.name;
        break;
    }
    case SIM_CMD_KERNELS_MULTI_INDIRECT:
        run_multi(queue, list, cmd, &span);
        break;
    case SIM_CMD_COPY:
        span.start_ns = sim_clock_host_ns();
        memmove(cmd->u.copy.dst, cmd->u.copy.src, cmd->u.copy.size);
        bandwidth_delay(span.start_ns, cmd->u.copy.size);
        kind = "copy";
        break;
    case SIM_CMD_COPY_REGION:
        span.start_ns = sim_clock_host_ns();
        copy_region(cmd);
        bandwidth_delay(span.start_ns, (size_t)cmd->u.region.dst_region.width *
                                           cmd->u.region.dst_region.height *
                                           cmd->u.region.dst_region.depth);
        kind = "copy_region";
        break;
    case SIM_CMD_FILL:
        span.start_ns = sim_clock_host_ns();
        fill(cmd);
        bandwidth_delay(span.start_ns, cmd->u.fill.size);
        kind = "fill";
        break;
    case SIM_CMD_QUERY_TIMESTAMPS:
        span.start_ns = sim_clock_host_ns();
        pthread_mutex_lock(&sim_lock);
        for (uint32_t i = 0; i < cmd->u.query.count; i++) {
            size_t offset = cmd->u.query.offsets ? cmd->u.query.offsets[i]
                                                 : i * sizeof(ze_kernel_timestamp_result_t);
            ze_kernel_timestamp_result_t result;
            sim_event_timestamp_result_locked(cmd->u.query.events[i], &result);
            memcpy((uint8_t *)cmd->u.query.dst + offset, &result, sizeof(result));
        }
        pthread_mutex_unlock(&sim_lock);
        span.end_ns = sim_clock_host_ns();
        kind = "query_timestamps";
        break;
    case SIM_CMD_GLOBAL_TIMESTAMP:
        span.start_ns = sim_clock_host_ns();
        *cmd->u.timestamp.dst = sim_clock_ticks_at(queue->device, span.start_ns);
        kind = "global_timestamp";
        break;
    case SIM_CMD_BARRIER:
        kind = "barrier";
        break;
    case SIM_CMD_SIGNAL:
        kind = "signal";
        break;
    case SIM_CMD_WAIT:
        kind = "wait";
        break;
    case SIM_CMD_EVENT_RESET:
        kind = "event_reset";
        break;
    case SIM_CMD_SEMAPHORE_SIGNAL:
    case SIM_CMD_SEMAPHORE_WAIT:
        span.start_ns = sim_clock_host_ns();
        sim_semaphore_run(queue, cmd);
        span.end_ns = sim_clock_host_ns();
        kind = cmd->kind == SIM_CMD_SEMAPHORE_SIGNAL ? "semaphore_signal" : "semaphore_wait";
        break;
    }
    if (span.start_ns == 0)
        span.start_ns = sim_clock_host_ns();
    if (span.end_ns == 0)
        span.end_ns = sim_clock_host_ns();
    if (work)
        sim_sysman_busy_end(queue, span.end_ns);
    if (kind)
        record(queue, list, kind, name, span, shape);

    pthread_mutex_lock(&sim_lock);
    if (cmd->kind == SIM_CMD_EVENT_RESET)
        sim_event_reset_locked(cmd->u.reset.event);
    if (cmd->kind == SIM_CMD_QUERY_TIMESTAMPS)
        sim_qkt_completed_locked(cmd);
    sim_event_complete_locked(queue, sequence, cmd, sim_clock_ticks_at(queue->device, span.start_ns),
                              sim_clock_ticks_at(queue->device, span.end_ns));
    pthread_mutex_unlock(&sim_lock);
}

static void run_submission(struct sim_queue *queue, struct sim_submission *submission)
{
    if (submission->cmd) {
        run_cmd(queue, submission->sequence, queue->handle, submission->cmd);
        return;
    }
    for (uint32_t l = 0; l < submission->list_count; l++) {
        struct sim_list *list = submission->lists[l];
        for (uint32_t i = 0; i < list->cmd_count; i++)
            run_cmd(queue, submission->sequence, list, list->cmds[i]);
    }
}

void *sim_engine_run(void *arg)
{
    struct sim_queue *queue = arg;
    __atomic_add_fetch(&live_workers, 1, __ATOMIC_ACQ_REL);
    pthread_mutex_lock(&sim_lock);
    for (;;) {
        while (!queue->head && !queue->shutdown)
            pthread_cond_wait(&sim_progress_cond, &sim_lock);
        struct sim_submission *submission = queue->head;
        if (!submission)
            break; /* shut down and nothing left */
        queue->head = submission->next;
        if (!queue->head)
            queue->tail = NULL;
        pthread_mutex_unlock(&sim_lock);

        run_submission(queue, submission);

        pthread_mutex_lock(&sim_lock);
        for (uint32_t l = 0; l < submission->list_count; l++)
            submission->lists[l]->inflight--;
        if (submission->fence)
            submission->fence->signaled = true;
        queue->completed = submission->sequence;
        pthread_cond_broadcast(&sim_progress_cond);
        pthread_mutex_unlock(&sim_lock);
        sim_cmd_free(submission->cmd);
        free(submission->lists);
        free(submission);
        pthread_mutex_lock(&sim_lock);
    }
    pthread_mutex_unlock(&sim_lock);
    __atomic_sub_fetch(&live_workers, 1, __ATOMIC_ACQ_REL);
    return NULL;
}
