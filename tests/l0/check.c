/*
 * check.c: see check.h.
 */
#include "check.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void check_true(bool ok, const char *what, const char *file, int line)
{
    if (ok)
        return;
    fprintf(stderr, "FAIL %s:%d: %s\n", file, line, what);
    fflush(stderr);
    exit(1);
}

void check_result(ze_result_t got, ze_result_t expected, const char *what, const char *file,
                  int line)
{
    if (got == expected)
        return;
    fprintf(stderr, "FAIL %s:%d: %s returned 0x%x, expected 0x%x\n", file, line, what,
            (unsigned)got, (unsigned)expected);
    fflush(stderr);
    exit(1);
}

int check_pass(const char *name)
{
    printf("PASS %s\n", name);
    return 0;
}

void l0_open(struct l0 *l0)
{
    memset(l0, 0, sizeof(*l0));
    CHECK_OK(zeInit(ZE_INIT_FLAG_GPU_ONLY));
    uint32_t count = 1;
    CHECK_OK(zeDriverGet(&count, &l0->driver));
    CHECK(count == 1);
    l0->device_count = 16;
    CHECK_OK(zeDeviceGet(l0->driver, &l0->device_count, l0->devices));
    CHECK(l0->device_count >= 1);
    l0->device = l0->devices[0];
    ze_context_desc_t context_desc = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, NULL, 0};
    CHECK_OK(zeContextCreate(l0->driver, &context_desc, &l0->context));
    static const uint8_t binary[] = {0x03, 0x02, 0x23, 0x07,
                                     0,    0,    1,    0}; /* a SPIR-V magic, no more */
    ze_module_desc_t module_desc = {ZE_STRUCTURE_TYPE_MODULE_DESC,
                                    NULL,
                                    ZE_MODULE_FORMAT_IL_SPIRV,
                                    sizeof(binary),
                                    binary,
                                    NULL,
                                    NULL};
    CHECK_OK(zeModuleCreate(l0->context, l0->device, &module_desc, &l0->module, NULL));
}

void l0_close(struct l0 *l0)
{
    CHECK_OK(zeModuleDestroy(l0->module));
    CHECK_OK(zeContextDestroy(l0->context));
}

ze_kernel_handle_t l0_kernel(struct l0 *l0, const char *name)
{
    ze_kernel_desc_t desc = {ZE_STRUCTURE_TYPE_KERNEL_DESC, NULL, 0, name};
    ze_kernel_handle_t kernel = NULL;
    CHECK_OK(zeKernelCreate(l0->module, &desc, &kernel));
    return kernel;
}

ze_command_queue_handle_t l0_queue(struct l0 *l0, ze_device_handle_t device, uint32_t ordinal,
                                   uint32_t index)
{
    ze_command_queue_desc_t desc = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                    NULL,
                                    ordinal,
                                    index,
                                    0,
                                    ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                                    ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_queue_handle_t queue = NULL;
    CHECK_OK(zeCommandQueueCreate(l0->context, device, &desc, &queue));
    return queue;
}

ze_command_list_handle_t l0_list(struct l0 *l0, ze_device_handle_t device, uint32_t ordinal,
                                 ze_command_list_flags_t flags)
{
    ze_command_list_desc_t desc = {ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, NULL, ordinal, flags};
    ze_command_list_handle_t list = NULL;
    CHECK_OK(zeCommandListCreate(l0->context, device, &desc, &list));
    return list;
}

ze_command_list_handle_t l0_immediate(struct l0 *l0, ze_device_handle_t device, uint32_t ordinal,
                                      ze_command_queue_flags_t flags)
{
    ze_command_queue_desc_t desc = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                    NULL,
                                    ordinal,
                                    0,
                                    flags,
                                    ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                                    ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_list_handle_t list = NULL;
    CHECK_OK(zeCommandListCreateImmediate(l0->context, device, &desc, &list));
    return list;
}

ze_event_pool_handle_t l0_pool(struct l0 *l0, ze_event_pool_flags_t flags, uint32_t count)
{
    ze_event_pool_desc_t desc = {ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, NULL, flags, count};
    ze_event_pool_handle_t pool = NULL;
    CHECK_OK(zeEventPoolCreate(l0->context, &desc, 0, NULL, &pool));
    return pool;
}

ze_event_handle_t l0_event(ze_event_pool_handle_t pool, uint32_t index)
{
    ze_event_desc_t desc = {ZE_STRUCTURE_TYPE_EVENT_DESC, NULL, index, 0, ZE_EVENT_SCOPE_FLAG_HOST};
    ze_event_handle_t event = NULL;
    CHECK_OK(zeEventCreate(pool, &desc, &event));
    return event;
}

void *l0_shared(struct l0 *l0, size_t size)
{
    ze_device_mem_alloc_desc_t device_desc = {ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, NULL, 0, 0};
    ze_host_mem_alloc_desc_t host_desc = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, NULL, 0};
    void *ptr = NULL;
    CHECK_OK(zeMemAllocShared(l0->context, &device_desc, &host_desc, size, 64, l0->device, &ptr));
    return ptr;
}

void l0_set_spin(ze_kernel_handle_t spin, uint64_t ns)
{
    CHECK_OK(zeKernelSetArgumentValue(spin, 0, sizeof(ns), &ns));
}

static uint64_t read_clock(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t now_mono_ns(void)
{
    return read_clock(CLOCK_MONOTONIC);
}

uint64_t now_raw_ns(void)
{
    return read_clock(CLOCK_MONOTONIC_RAW);
}

void truth_setup(char *path, size_t size)
{
    snprintf(path, size, "/tmp/zesim-truth-XXXXXX");
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    CHECK(setenv("ZESIM_TRUTH", path, 1) == 0);
}

static uint64_t field_u64(const char *line, const char *key)
{
    const char *at = strstr(line, key);
    CHECK(at != NULL);
    return strtoull(at + strlen(key), NULL, 10);
}

static void field_string(const char *line, const char *key, char *out, size_t size)
{
    const char *at = strstr(line, key);
    CHECK(at != NULL);
    at += strlen(key);
    const char *end = strchr(at, '"');
    CHECK(end != NULL && (size_t)(end - at) < size);
    memcpy(out, at, (size_t)(end - at));
    out[end - at] = '\0';
}

size_t truth_read(const char *path, struct truth_line **lines)
{
    FILE *file = fopen(path, "r");
    CHECK(file != NULL);
    size_t count = 0, capacity = 0;
    struct truth_line *all = NULL;
    char text[1024];
    while (fgets(text, sizeof(text), file)) {
        if (count == capacity) {
            capacity = capacity ? 2 * capacity : 64;
            all = realloc(all, capacity * sizeof(*all));
            CHECK(all != NULL);
        }
        struct truth_line *t = &all[count++];
        t->device = (uint32_t)field_u64(text, "\"device\":");
        field_string(text, "\"kind\":\"", t->kind, sizeof(t->kind));
        field_string(text, "\"name\":\"", t->name, sizeof(t->name));
        t->start_ns = field_u64(text, "\"start_ns\":");
        t->end_ns = field_u64(text, "\"end_ns\":");
        t->start_ticks = field_u64(text, "\"start_ticks\":");
        t->end_ticks = field_u64(text, "\"end_ticks\":");
    }
    fclose(file);
    *lines = all;
    return count;
}
