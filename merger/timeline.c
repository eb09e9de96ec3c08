/* timeline: the Chrome Trace Event file, lanes, flows and its atomic publication (timeline.h). */
#include "timeline.h"

#include "grow.h"
#include "map.h"
#include "sorter.h"
#include "supervise.h"
#include "timeline_format.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SORTER_BUDGET (32u << 20) /* bytes of records and index kept in memory before spilling */

enum record_type { RECORD_API = 1, RECORD_DEVICE, RECORD_FLOW_START, RECORD_COUNTER };

struct sibling {
    uint32_t number;
    int64_t end_ns; /* axis time at which the sibling's last slice ends */
};

struct lane {
    enum zm_timeline_lane_kind kind;
    uint32_t number; /* unique in the file (timeline_format.h) */
    uint32_t parent; /* thread kinds: index of the process lane */
    uint32_t host;
    int64_t pid, tid;         /* API lanes */
    uint64_t queue;           /* queue lanes */
    long engine;              /* queue lanes: index of their engine lane, or -1 */
    struct zm_engine slot;    /* engine lanes */
    const char *device_name;  /* Weak: device lanes */
    struct sibling *siblings; /* Owned by this: queue lanes, [0] is the lane itself */
    size_t sibling_count, sibling_capacity;
};

struct api_record {
    uint8_t type, synthetic;
    uint32_t result, thread_lane;
    int64_t duration_ns;
    const char *name; /* Weak: interned, alive until finish */
};

struct device_record {
    uint8_t type;
    uint32_t queue_lane;
    int64_t duration_ns, uncertainty_ns;
    uint64_t flow, call_id, execution;
    const char *name; /* Weak: interned */
};

struct flow_record {
    uint8_t type;
    uint32_t thread_lane;
    uint64_t flow;
};

struct counter_record {
    uint8_t type, kind; /* kind: enum zm_counter_kind */
    uint32_t device_lane;
    double value;
};

struct zm_timeline {
    char *path;      /* as given, for messages; Owned by this */
    char *target;    /* the file written: `path` with its symbolic links followed; Owned */
    char *temp_path; /* the named temporary file, while there is one; Owned */
    bool unnamed;    /* `out` is an O_TMPFILE, named only to be renamed into place */
    bool special;    /* the target is a FIFO or a device: copied into at the end */
    FILE *out;              /* Owned by this */
    const struct zm_timeline_format *format;
    void *writer; /* the format's, while the file is written; Owned by this */
    struct zm_sorter sorter;
    struct lane *lanes; /* Owned by this */
    size_t lane_count, lane_capacity;
    uint32_t next_number;
    struct zm_map process_lanes, thread_lanes, device_lanes, engine_lanes, queue_lanes;
    const char **hostnames; /* Weak each; array owned by this */
    uint32_t host_count;
    size_t host_capacity;
    uint64_t next_flow;
    /* Merge state */
    const struct zm_timeline_placement *placement;
    bool have_origin;
    int64_t origin_ns;
};

static void fail(char *reason, int size, const char *what, const char *path)
{
    char shown[1024];
    zm_supervise_escape_line(shown, sizeof(shown), path);
    snprintf(reason, (size_t)size, "Failed to %s: path=%s, reason=%s", what, shown,
             strerror(errno));
}

/* The file that writing `path` means: symbolic links followed, dangling ones too (their target
 * is created), so that -l onto a link writes where it points instead of replacing the link. */
static char *resolve_target(const char *path)
{
    char *current = strdup(path);
    for (int depth = 0; current && depth < 40; depth++) {
        struct stat info;
        char link[PATH_MAX];
        if (lstat(current, &info) != 0 || !S_ISLNK(info.st_mode))
            return current;
        ssize_t length = readlink(current, link, sizeof(link) - 1);
        if (length < 0)
            return current;
        link[length] = '\0';
        const char *slash = strrchr(current, '/');
        size_t size = strlen(current) + (size_t)length + 2;
        char *next = malloc(size);
        if (next && (link[0] == '/' || !slash))
            snprintf(next, size, "%s", link);
        else if (next)
            snprintf(next, size, "%.*s/%s", (int)(slash - current), current, link);
        free(current);
        current = next;
    }
    if (current)
        errno = ELOOP;
    else
        errno = ENOMEM;
    free(current);
    return NULL;
}

/* An unnamed file in `directory` (O_TMPFILE): it vanishes with the process however the process
 * ends, so a crash or a SIGKILL leaves nothing. -1 where the file system cannot, or where it
 * could not be given a name at the end (no /proc). */
static int unnamed_file(const char *directory)
{
    if (access("/proc/self/fd", X_OK) != 0)
        return -1;
    return open(directory, O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);
}

static char *directory_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

/* Whether `path` names a Perfetto trace (ends in ".pftrace"). */
static bool is_perfetto_path(const char *path)
{
    static const char suffix[] = ".pftrace";
    size_t length = strlen(path);
    return length >= sizeof(suffix) - 1 &&
           strcmp(path + length - (sizeof(suffix) - 1), suffix) == 0;
}

struct zm_timeline *zm_timeline_open(const char *path, enum zm_timeline_kind kind, char *reason,
                                     int reason_size)
{
    struct zm_timeline *timeline = calloc(1, sizeof(*timeline));
    if (!timeline)
        return NULL;
    if (kind == ZM_TIMELINE_BY_NAME)
        kind = is_perfetto_path(path) ? ZM_TIMELINE_PERFETTO : ZM_TIMELINE_JSON;
    timeline->format = kind == ZM_TIMELINE_PERFETTO ? &zm_perfetto_format : &zm_timeline_json_format;
    int fd = -1;
    char *directory = NULL;
    timeline->path = strdup(path);
    timeline->target = resolve_target(path);
    if (!timeline->path || !timeline->target)
        goto error;
    if (zm_sorter_init(&timeline->sorter, SORTER_BUDGET) != 0) {
        errno = ENOMEM;
        goto error;
    }
    struct stat info;
    if (stat(timeline->target, &info) == 0 && !S_ISREG(info.st_mode)) {
        if (S_ISDIR(info.st_mode)) {
            errno = EISDIR;
            goto error;
        }
        /* A FIFO or a device: written into at the end (never replaced), from a temporary file
         * in TMPDIR, so that nothing reaches it unless the merge succeeds. */
        if (access(timeline->target, W_OK) != 0)
            goto error;
        timeline->special = true;
        const char *tmpdir = getenv("TMPDIR");
        directory = strdup(tmpdir && *tmpdir ? tmpdir : "/tmp");
    } else {
        directory = directory_of(timeline->target);
    }
    if (!directory) {
        errno = ENOMEM;
        goto error;
    }
    fd = unnamed_file(directory);
    if (fd >= 0) {
        timeline->unnamed = true;
    } else {
        /* Fallback: a named FILE.tmp.XXXXXX (the supervisor removes it if this process dies). */
        size_t length = strlen(timeline->special ? directory : timeline->target) +
                        sizeof("/zeprof-timeline.tmp.XXXXXX");
        timeline->temp_path = malloc(length);
        if (!timeline->temp_path) {
            errno = ENOMEM;
            goto error;
        }
        if (timeline->special)
            snprintf(timeline->temp_path, length, "%s/zeprof-timeline.tmp.XXXXXX", directory);
        else
            snprintf(timeline->temp_path, length, "%s.tmp.XXXXXX", timeline->target);
        fd = mkstemp(timeline->temp_path);
        if (fd < 0) {
            free(timeline->temp_path);
            timeline->temp_path = NULL;
            goto error;
        }
        zm_supervise_temp_file(timeline->temp_path);
        /* mkstemp creates 0600; the timeline is an ordinary file: 0666 less the umask. */
        mode_t mask = umask(0);
        umask(mask);
        fchmod(fd, 0666 & ~mask);
    }
    timeline->out = fdopen(fd, "w+");
    if (!timeline->out)
        goto error;
    fd = -1;
    free(directory);
    zm_map_init(&timeline->process_lanes);
    zm_map_init(&timeline->thread_lanes);
    zm_map_init(&timeline->device_lanes);
    zm_map_init(&timeline->engine_lanes);
    zm_map_init(&timeline->queue_lanes);
    timeline->next_number = 1;
    return timeline;
error:
    fail(reason, reason_size, "write timeline", path);
    if (fd >= 0)
        close(fd);
    free(directory);
    zm_timeline_abort(timeline);
    return NULL;
}

static void destroy(struct zm_timeline *timeline)
{
    for (size_t i = 0; i < timeline->lane_count; i++)
        free(timeline->lanes[i].siblings);
    free(timeline->lanes);
    zm_map_release(&timeline->process_lanes);
    zm_map_release(&timeline->thread_lanes);
    zm_map_release(&timeline->device_lanes);
    zm_map_release(&timeline->engine_lanes);
    zm_map_release(&timeline->queue_lanes);
    zm_sorter_release(&timeline->sorter);
    if (timeline->writer)
        timeline->format->free(timeline->writer);
    free(timeline->hostnames);
    free(timeline->path);
    free(timeline->target);
    free(timeline->temp_path);
    free(timeline);
}

/* Removes the named temporary file, if there is one. */
static void remove_temp(struct zm_timeline *timeline)
{
    if (timeline->temp_path) {
        unlink(timeline->temp_path);
        zm_supervise_temp_file(NULL);
    }
}

void zm_timeline_abort(struct zm_timeline *timeline)
{
    if (!timeline)
        return;
    if (timeline->out)
        fclose(timeline->out);
    remove_temp(timeline);
    destroy(timeline);
}

/* Copies the finished temporary file into the FIFO or device the target is. */
static int copy_into_target(struct zm_timeline *timeline)
{
    int from = fileno(timeline->out);
    if (lseek(from, 0, SEEK_SET) != 0)
        return -1;
    int to = open(timeline->target, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (to < 0)
        return -1;
    char buffer[1 << 16];
    ssize_t n;
    while ((n = read(from, buffer, sizeof(buffer))) > 0) {
        for (ssize_t done = 0; done < n;) {
            ssize_t written = write(to, buffer + done, (size_t)(n - done));
            if (written < 0 && errno == EINTR)
                continue;
            if (written <= 0) {
                int saved = errno;
                close(to);
                errno = saved;
                return -1;
            }
            done += written;
        }
    }
    if (n < 0) {
        close(to);
        return -1;
    }
    return close(to);
}

/* Gives the unnamed file a temporary name beside the target (FILE.tmp.XXXXXX); the name exists
 * only until the rename that follows. */
static int name_unnamed(struct zm_timeline *timeline)
{
    char proc_path[64];
    snprintf(proc_path, sizeof(proc_path), "/proc/self/fd/%d", fileno(timeline->out));
    size_t length = strlen(timeline->target) + sizeof(".tmp.XXXXXXXXXXXXXXXX");
    timeline->temp_path = malloc(length);
    if (!timeline->temp_path) {
        errno = ENOMEM;
        return -1;
    }
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    uint64_t salt = (uint64_t)now.tv_nsec ^ ((uint64_t)getpid() << 32);
    for (int attempt = 0; attempt < 100; attempt++) {
        salt = salt * 6364136223846793005u + 1442695040888963407u;
        snprintf(timeline->temp_path, length, "%s.tmp.%06" PRIx64, timeline->target,
                 (salt >> 40) & 0xffffff);
        zm_supervise_temp_file(timeline->temp_path);
        if (linkat(AT_FDCWD, proc_path, AT_FDCWD, timeline->temp_path, AT_SYMLINK_FOLLOW) == 0)
            return 0;
        if (errno != EEXIST)
            break;
    }
    int saved = errno;
    zm_supervise_temp_file(NULL);
    free(timeline->temp_path);
    timeline->temp_path = NULL;
    errno = saved;
    return -1;
}

/* Puts the finished file in place: into a FIFO or device, else renamed over the target. */
static int publish(struct zm_timeline *timeline)
{
    if (timeline->special) {
        zm_supervise_output_wait(1); /* a FIFO's reader may take its time */
        int status = copy_into_target(timeline);
        zm_supervise_output_wait(0);
        return status;
    }
    if (timeline->unnamed && name_unnamed(timeline) != 0)
        return -1;
    if (rename(timeline->temp_path, timeline->target) != 0)
        return -1;
    free(timeline->temp_path);
    timeline->temp_path = NULL;
    zm_supervise_temp_file(NULL);
    return 0;
}

int zm_timeline_begin_host(struct zm_timeline *timeline, uint32_t host, const char *hostname)
{
    if (ZM_GROW(timeline->hostnames, timeline->host_capacity, (size_t)host + 1, 4) != 0)
        return -1;
    if (host >= timeline->host_count)
        timeline->host_count = host + 1;
    timeline->hostnames[host] = hostname;
    return 0;
}

/* Returns the index of a new lane, or -1. */
static long add_lane(struct zm_timeline *timeline, const struct lane *lane)
{
    if (ZM_GROW(timeline->lanes, timeline->lane_capacity, timeline->lane_count + 1, 64) != 0)
        return -1;
    timeline->lanes[timeline->lane_count] = *lane;
    timeline->lanes[timeline->lane_count].number = timeline->next_number++;
    return (long)timeline->lane_count++;
}

/* Finds or creates the lane stored in `map` under (a, b). */
static long lane_for(struct zm_timeline *timeline, struct zm_map *map, uint64_t a, uint64_t b,
                     const struct lane *model)
{
    uint64_t *found = zm_map_find(map, a, b);
    if (found)
        return (long)*found;
    long index = add_lane(timeline, model);
    if (index < 0 || zm_map_put(map, a, b, (uint64_t)index) != 0)
        return -1;
    return index;
}

/* The lane of thread `tid` of (host, pid), created with its process lane when new; -1 when out of
 * memory. */
static long thread_lane_for(struct zm_timeline *timeline, uint32_t host, int64_t pid, int64_t tid)
{
    long process = lane_for(timeline, &timeline->process_lanes, host, (uint64_t)pid,
                            &(struct lane){.kind = ZM_LANE_PROCESS, .host = host, .pid = pid});
    if (process < 0)
        return -1;
    return lane_for(timeline, &timeline->thread_lanes, zm_map_process_key(host, pid), (uint64_t)tid,
                    &(struct lane){.kind = ZM_LANE_THREAD,
                                   .parent = (uint32_t)process,
                                   .host = host,
                                   .pid = pid,
                                   .tid = tid});
}

int zm_timeline_api_span(struct zm_timeline *timeline, const struct zm_api_span *span)
{
    long thread = thread_lane_for(timeline, span->host, span->pid, span->tid);
    if (thread < 0)
        return -1;
    /* Field by field after a memset: the padding is written to spill files too. */
    struct api_record record;
    memset(&record, 0, sizeof(record));
    record.type = RECORD_API;
    record.synthetic = span->synthetic;
    record.result = span->result;
    record.thread_lane = (uint32_t)thread;
    record.duration_ns = span->end_ns - span->start_ns;
    record.name = span->function;
    return zm_sorter_add(&timeline->sorter, span->start_ns, span->host, &record, sizeof(record));
}

int zm_timeline_device_span(struct zm_timeline *timeline, const struct zm_device_span *span)
{
    if (!span->anchored)
        return 0; /* no time to draw it at (counted in the tally's unanchored_timings) */
    long device = lane_for(
        timeline, &timeline->device_lanes, span->host, span->device_label,
        &(struct lane){.kind = ZM_LANE_DEVICE, .host = span->host, .device_name = span->device_name});
    if (device < 0)
        return -1;
    /* The engine, when known: one lane per (device, ordinal, index), whichever process. */
    long engine = -1;
    const struct zm_engine *slot = &span->engine;
    if (slot->known) {
        engine = lane_for(timeline, &timeline->engine_lanes,
                          (uint64_t)span->host << 32 | span->device_label,
                          (uint64_t)slot->ordinal << 32 | slot->index,
                          &(struct lane){.kind = ZM_LANE_ENGINE,
                                         .parent = (uint32_t)device,
                                         .host = span->host,
                                         .slot = *slot});
        if (engine < 0)
            return -1;
    }
    /* Queue handles are per process; the device label keeps two devices' queues apart, the
     * engine (ordinal * 16 + index + 1 modulo 256 in bits 48..55, where user-space addresses have
     * none) a handle reused by a queue of another engine. */
    uint64_t engine_bits = slot->known ? ((slot->ordinal << 4 | slot->index) + 1) & 0xff : 0;
    long queue =
        lane_for(timeline, &timeline->queue_lanes, zm_map_process_key(span->host, span->pid),
                 span->queue ^ ((uint64_t)span->device_label << 56) ^ (engine_bits << 48),
                 &(struct lane){.kind = ZM_LANE_QUEUE,
                                .parent = (uint32_t)device,
                                .host = span->host,
                                .pid = span->pid,
                                .queue = span->queue,
                                .engine = engine});
    if (queue < 0)
        return -1;
    uint64_t flow = 0;
    if (span->linked) {
        long thread = thread_lane_for(timeline, span->host, span->pid, span->api_tid);
        if (thread < 0)
            return -1;
        flow = ++timeline->next_flow;
        struct flow_record start;
        memset(&start, 0, sizeof(start));
        start.type = RECORD_FLOW_START;
        start.thread_lane = (uint32_t)thread;
        start.flow = flow;
        if (zm_sorter_add(&timeline->sorter, span->append_ns, span->host, &start, sizeof(start)) !=
            0)
            return -1;
    }
    struct device_record record;
    memset(&record, 0, sizeof(record));
    record.type = RECORD_DEVICE;
    record.queue_lane = (uint32_t)queue;
    record.duration_ns = span->end_ns - span->start_ns;
    record.uncertainty_ns = span->uncertainty_ns;
    record.flow = flow;
    record.call_id = span->call_id;
    record.execution = span->execution;
    record.name = span->name;
    return zm_sorter_add(&timeline->sorter, span->start_ns, span->host, &record, sizeof(record));
}

int zm_timeline_counter(struct zm_timeline *timeline, const struct zm_counter_sample *sample)
{
    long device = lane_for(
        timeline, &timeline->device_lanes, sample->host, sample->device_label,
        &(struct lane){
            .kind = ZM_LANE_DEVICE, .host = sample->host, .device_name = sample->device_name});
    if (device < 0)
        return -1;
    struct counter_record record;
    memset(&record, 0, sizeof(record));
    record.type = RECORD_COUNTER;
    record.kind = (uint8_t)sample->kind;
    record.device_lane = (uint32_t)device;
    record.value = sample->value;
    return zm_sorter_add(&timeline->sorter, sample->time_ns, sample->host, &record,
                         sizeof(record));
}

int zm_timeline_end_host(struct zm_timeline *timeline)
{
    return zm_sorter_flush(&timeline->sorter);
}

/* ---- Writing ---------------------------------------------------------------------------- */

static bool host_placed(const struct zm_timeline *timeline, uint32_t host)
{
    const struct zm_timeline_placement *placement = timeline->placement;
    return placement->placed(placement->context, host);
}

/* "compute engine 0.1", "copy engine 1.0"; "engine 2.0" when the group's kind is not known. */
static void engine_name(char *name, size_t size, const struct zm_engine *slot)
{
    static const char *const kinds[] = {"", "compute ", "copy "};
    snprintf(name, size, "%sengine %" PRIu32 ".%" PRIu32, kinds[slot->kind], slot->ordinal,
             slot->index);
}

/* Sorts the queue lanes of one engine together, engines by ordinal then index. */
static uint32_t engine_rank(const struct zm_engine *slot)
{
    uint32_t ordinal = slot->ordinal < 0x7fff ? slot->ordinal : 0x7fff;
    uint32_t index = slot->index < 0xffff ? slot->index : 0xffff;
    return 1 + (ordinal << 16 | index);
}

/* Names a lane (or its sibling number `sibling` > 0) through the format. */
static int write_lane_name(struct zm_timeline *timeline, const struct lane *lane, uint32_t sibling,
                           int64_t ts_ns)
{
    bool process = lane->kind == ZM_LANE_PROCESS || lane->kind == ZM_LANE_DEVICE;
    struct zm_timeline_lane shown = {
        .kind = lane->kind,
        .number = lane->number,
        .process = process ? lane->number : timeline->lanes[lane->parent].number,
        .pid = lane->pid,
        .tid = lane->tid,
    };
    shown.parent = shown.process;
    char engine[96] = "";
    if (lane->kind == ZM_LANE_QUEUE && sibling > 0)
        shown.number = lane->siblings[sibling].number;
    if (lane->kind == ZM_LANE_QUEUE && lane->engine >= 0) {
        const struct lane *holder = &timeline->lanes[lane->engine];
        shown.parent = holder->number;
        shown.sort_index = engine_rank(&holder->slot);
        engine_name(engine, sizeof(engine), &holder->slot);
        strcat(engine, ": ");
    }
    char name[512] = "";
    const char *prefix = host_placed(timeline, lane->host) ? "" : "[unplaced] ";
    const char *hostname = timeline->hostnames[lane->host];
    switch (lane->kind) {
    case ZM_LANE_PROCESS:
        snprintf(name, sizeof(name), "%s%s pid %" PRId64, prefix, hostname, lane->pid);
        break;
    case ZM_LANE_DEVICE:
        snprintf(name, sizeof(name), "%s%s %s", prefix, hostname, lane->device_name);
        break;
    case ZM_LANE_THREAD:
        snprintf(name, sizeof(name), "tid %" PRId64, lane->tid);
        break;
    case ZM_LANE_ENGINE:
        engine_name(name, sizeof(name), &lane->slot);
        break;
    case ZM_LANE_QUEUE:
        if (sibling == 0)
            snprintf(name, sizeof(name), "%squeue 0x%" PRIx64 " pid %" PRId64, engine, lane->queue,
                     lane->pid);
        else
            snprintf(name, sizeof(name), "%squeue 0x%" PRIx64 " pid %" PRId64 " #%u", engine,
                     lane->queue, lane->pid, sibling + 1);
        break;
    }
    shown.name = name;
    return timeline->format->lane(timeline->writer, &shown, ts_ns);
}

/* The sibling of a queue lane free at `start`; a new one (named on the spot) when none is. */
static int sibling_for(struct zm_timeline *timeline, struct lane *lane, int64_t start, int64_t end,
                       int64_t ts_ns)
{
    for (size_t i = 0; i < lane->sibling_count; i++) {
        if (lane->siblings[i].end_ns <= start) {
            lane->siblings[i].end_ns = end;
            return (int)i;
        }
    }
    if (ZM_GROW(lane->siblings, lane->sibling_capacity, lane->sibling_count + 1, 4) != 0)
        return -1;
    uint32_t number = lane->sibling_count == 0 ? lane->number : timeline->next_number++;
    lane->siblings[lane->sibling_count++] = (struct sibling){number, end};
    if (lane->sibling_count > 1 &&
        write_lane_name(timeline, lane, (uint32_t)lane->sibling_count - 1, ts_ns) != 0)
        return -1;
    return (int)lane->sibling_count - 1;
}

static int64_t axis_of(void *context, uint32_t host, int64_t key)
{
    const struct zm_timeline *timeline = context;
    return timeline->placement->axis_ns(timeline->placement->context, host, key, NULL);
}

static int emit(void *context, int64_t axis_ns, uint32_t host, const void *payload, uint32_t length)
{
    struct zm_timeline *timeline = context;
    (void)length;
    zm_supervise_progress(); /* writing millions of records is progress, not a stall */
    if (!timeline->have_origin) {
        timeline->have_origin = true;
        timeline->origin_ns = axis_ns;
    }
    int64_t ts = axis_ns - timeline->origin_ns;
    const struct zm_timeline_placement *placement = timeline->placement;
    struct zm_timeline_slice slice = {
        .hostname = timeline->hostnames[host],
        .ts_ns = ts,
        .placement_bound_ns = placement->bound_ns(placement->context, host, axis_ns),
    };
    uint8_t type;
    memcpy(&type, payload, 1);
    if (type == RECORD_API) {
        struct api_record record;
        memcpy(&record, payload, sizeof(record));
        const struct lane *thread = &timeline->lanes[record.thread_lane];
        slice.name = record.name;
        slice.duration_ns = record.duration_ns;
        slice.process = timeline->lanes[thread->parent].number;
        slice.lane = thread->number;
        slice.pid = thread->pid;
        slice.tid = thread->tid;
        slice.result = record.result;
        slice.synthetic = record.synthetic;
        return timeline->format->slice(timeline->writer, &slice);
    }
    if (type == RECORD_FLOW_START) {
        struct flow_record record;
        memcpy(&record, payload, sizeof(record));
        const struct lane *thread = &timeline->lanes[record.thread_lane];
        return timeline->format->flow_start(timeline->writer, ts, record.flow,
                                            timeline->lanes[thread->parent].number,
                                            thread->number);
    }
    if (type == RECORD_COUNTER) {
        /* A counter track per kind on the device's lane (docs/interface.md). */
        static const char *const names[ZM_COUNTER_KINDS] = {"utilization %", "frequency MHz",
                                                             "power W", "memory MiB"};
        static const char *const units[ZM_COUNTER_KINDS] = {"%", "MHz", "W", "MiB"};
        struct counter_record record;
        memcpy(&record, payload, sizeof(record));
        struct zm_timeline_counter counter = {
            .ts_ns = ts,
            .process = timeline->lanes[record.device_lane].number,
            .kind = record.kind,
            .name = names[record.kind],
            .unit = units[record.kind],
            .value = record.value,
        };
        return timeline->format->counter(timeline->writer, &counter);
    }
    struct device_record record;
    memcpy(&record, payload, sizeof(record));
    struct lane *queue = &timeline->lanes[record.queue_lane];
    const struct lane *device = &timeline->lanes[queue->parent];
    int sibling = sibling_for(timeline, queue, axis_ns, axis_ns + record.duration_ns, ts);
    if (sibling < 0)
        return -1;
    slice.device = true;
    slice.name = record.name;
    slice.duration_ns = record.duration_ns;
    slice.process = device->number;
    slice.lane = queue->siblings[sibling].number;
    slice.pid = queue->pid;
    slice.device_name = device->device_name;
    slice.uncertainty_ns = record.uncertainty_ns;
    slice.queue = queue->queue;
    slice.call_id = record.call_id;
    slice.execution = record.execution;
    slice.flow = record.flow;
    return timeline->format->slice(timeline->writer, &slice);
}

int zm_timeline_finish(struct zm_timeline *timeline, const struct zm_timeline_placement *placement,
                       json_t *metadata, char *reason, int reason_size)
{
    FILE *out = timeline->out;
    timeline->placement = placement;
    timeline->writer = timeline->format->new(out);
    if (!timeline->writer) {
        errno = ENOMEM;
        goto error;
    }
    for (size_t i = 0; i < timeline->lane_count; i++) {
        if (write_lane_name(timeline, &timeline->lanes[i], 0, 0) != 0)
            goto error;
    }
    if (zm_sorter_merge(&timeline->sorter, axis_of, emit, timeline) != 0)
        goto error;
    json_object_set_new(metadata, "origin_ns", json_integer(timeline->origin_ns));
    if (timeline->format->end(timeline->writer, metadata) != 0)
        goto error;
    if (ferror(out) || fflush(out) != 0 || (!timeline->special && fsync(fileno(out)) != 0))
        goto error;
    if (publish(timeline) != 0)
        goto error;
    timeline->out = NULL;
    if (fclose(out) != 0)
        goto error;
    destroy(timeline);
    return 0;
error:
    fail(reason, reason_size, "write timeline", timeline->path);
    zm_timeline_abort(timeline);
    return -1;
}
