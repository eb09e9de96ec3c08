/*
 * sim_truth.c: the ground-truth log (ZESIM_TRUTH=FILE).
 *
 * One JSON line per executed command, written with a single write(2) on an O_APPEND descriptor
 * under a lock: lines never interleave, and nothing is buffered, so the file is complete whenever
 * the program exits, however it exits. Owns the file descriptor.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "sim.h"

static pthread_mutex_t truth_lock = PTHREAD_MUTEX_INITIALIZER;
static int truth_fd = -1;

/* fork: a worker thread may be writing a line at that instant, and the child (which has no
 * workers) would find the lock held for ever when its exit closes the file. Held across fork. */
static void lock_for_fork(void)
{
    pthread_mutex_lock(&truth_lock);
}

static void unlock_after_fork(void)
{
    pthread_mutex_unlock(&truth_lock);
}

void sim_truth_open(void)
{
    const char *path = getenv("ZESIM_TRUTH");
    if (!path || !*path)
        return;
    pthread_atfork(lock_for_fork, unlock_after_fork, unlock_after_fork);
    truth_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (truth_fd < 0)
        fprintf(stderr, "zesim: Failed to open truth file: path=%s\n", path);
}

void sim_truth_close(void)
{
    pthread_mutex_lock(&truth_lock);
    if (truth_fd >= 0)
        close(truth_fd);
    truth_fd = -1;
    pthread_mutex_unlock(&truth_lock);
}

bool sim_truth_enabled(void)
{
    return truth_fd >= 0;
}

void sim_truth_record(uint32_t device, const char *kind, const char *name, uint64_t start_ns,
                      uint64_t end_ns, uint64_t start_ticks, uint64_t end_ticks, const void *list,
                      const void *queue, const uint32_t engine[2],
                      const struct sim_truth_shape *shape)
{
    if (truth_fd < 0)
        return;
    /* Kernel names come from the application: keep the line valid JSON whatever they hold. */
    char safe[256];
    size_t k = 0;
    for (const char *c = name; *c && k + 1 < sizeof(safe); c++)
        safe[k++] = (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20) ? '_' : *c;
    safe[k] = '\0';
    char launch[160] = "";
    if (shape)
        snprintf(launch, sizeof(launch),
                 ",\"group_count\":[%" PRIu32 ",%" PRIu32 ",%" PRIu32 "],\"group_size\":[%" PRIu32
                 ",%" PRIu32 ",%" PRIu32 "],\"simd\":%u",
                 shape->groups.groupCountX, shape->groups.groupCountY, shape->groups.groupCountZ,
                 shape->group_size[0], shape->group_size[1], shape->group_size[2],
                 SIM_KERNEL_SIMD);
    char line[928];
    int n = snprintf(line, sizeof(line),
                     "{\"device\":%" PRIu32 ",\"kind\":\"%s\",\"name\":\"%s\",\"start_ns\":%" PRIu64
                     ",\"end_ns\":%" PRIu64 ",\"start_ticks\":%" PRIu64 ",\"end_ticks\":%" PRIu64
                     ",\"list\":\"%p\",\"queue\":\"%p\",\"engine\":\"%" PRIu32 ".%" PRIu32
                     "\"%s}\n",
                     device, kind, safe, start_ns, end_ns, start_ticks, end_ticks, list, queue,
                     engine[0], engine[1], launch);
    if (n <= 0 || (size_t)n >= sizeof(line))
        return;
    pthread_mutex_lock(&truth_lock);
    if (truth_fd >= 0 && write(truth_fd, line, (size_t)n) != n)
        fprintf(stderr, "zesim: Failed to write truth line\n");
    pthread_mutex_unlock(&truth_lock);
}
