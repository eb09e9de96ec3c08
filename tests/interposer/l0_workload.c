/*
 * l0_workload: a small Level Zero program for the shim's tests (simulated device).
 *
 * Usage: l0_workload direct|dlsym|tables [--expect-origin PATH] [--calls FILE] [--expect-uninit]
 *
 * Runs one fixed sequence (init, driver and device discovery, context, shared memory, module,
 * kernel zesim_vadd_f32 on a regular list and queue, a copy, one failing call) and prints its
 * results on stdout, so that runs with and without the shim can be compared byte for byte. The
 * functions are reached one of three ways:
 * - direct: through the program's own link to libze_loader.so.1;
 * - dlsym: dlopen("libze_loader.so.1") + dlsym, as SYCL runtimes and MKL do;
 * - tables: the ze*Get*ProcAddrTable tables, as static loaders and layers do.
 * --expect-origin PATH: fail unless every function pointer used lies in the object PATH (checks
 *   that dlsym and the tables hand out the shim's wrappers).
 * --calls FILE: write the name of every Level Zero call made, in order, one per line.
 * --expect-uninit: only check that every call returns ZE_RESULT_ERROR_UNINITIALIZED.
 * --fork: afterwards, fork; the child (which does not exec) calls zeInit and zeDriverGet, which
 *   must succeed, and the parent prints the child's status (fork_child=0).
 * Exit status: 0 when everything behaved, 1 otherwise (with a reason on stderr).
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ze_api.h>
#include <ze_ddi.h>

#define ELEMENTS 1024

struct api {
    ze_pfnInit_t init;
    ze_pfnDriverGet_t driver_get;
    ze_pfnDeviceGet_t device_get;
    ze_pfnDeviceGetProperties_t device_get_properties;
    ze_pfnContextCreate_t context_create;
    ze_pfnContextDestroy_t context_destroy;
    ze_pfnMemAllocShared_t mem_alloc_shared;
    ze_pfnMemFree_t mem_free;
    ze_pfnModuleCreate_t module_create;
    ze_pfnModuleDestroy_t module_destroy;
    ze_pfnKernelCreate_t kernel_create;
    ze_pfnKernelDestroy_t kernel_destroy;
    ze_pfnKernelSetArgumentValue_t kernel_set_argument_value;
    ze_pfnKernelSetGroupSize_t kernel_set_group_size;
    ze_pfnCommandQueueCreate_t queue_create;
    ze_pfnCommandQueueDestroy_t queue_destroy;
    ze_pfnCommandQueueExecuteCommandLists_t queue_execute;
    ze_pfnCommandQueueSynchronize_t queue_synchronize;
    ze_pfnCommandListCreate_t list_create;
    ze_pfnCommandListDestroy_t list_destroy;
    ze_pfnCommandListClose_t list_close;
    ze_pfnCommandListAppendLaunchKernel_t append_launch_kernel;
    ze_pfnCommandListAppendMemoryCopy_t append_memory_copy;
    ze_pfnImageGetProperties_t image_get_properties;
};

static FILE *calls_file;
static int failures;

/* Every call goes through CALL so that --calls can list it. */
#define CALL(api, member, name, ...) \
    (calls_file ? fprintf(calls_file, "%s\n", name) : 0, (api)->member(__VA_ARGS__))

static void expect(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "l0_workload: failed: %s\n", what);
        failures++;
    }
}

static void *lookup(void *handle, const char *name)
{
    void *symbol = dlsym(handle, name);

    if (symbol == NULL) {
        fprintf(stderr, "l0_workload: missing symbol: name=%s\n", name);
        exit(1);
    }
    return symbol;
}

#define FILL_DIRECT(member, function) api->member = function
#define FILL_DLSYM(member, function) \
    do { void *s = lookup(handle, #function); memcpy(&api->member, &s, sizeof(s)); } while (0)

static void fill_direct(struct api *api)
{
    FILL_DIRECT(init, zeInit);
    FILL_DIRECT(driver_get, zeDriverGet);
    FILL_DIRECT(device_get, zeDeviceGet);
    FILL_DIRECT(device_get_properties, zeDeviceGetProperties);
    FILL_DIRECT(context_create, zeContextCreate);
    FILL_DIRECT(context_destroy, zeContextDestroy);
    FILL_DIRECT(mem_alloc_shared, zeMemAllocShared);
    FILL_DIRECT(mem_free, zeMemFree);
    FILL_DIRECT(module_create, zeModuleCreate);
    FILL_DIRECT(module_destroy, zeModuleDestroy);
    FILL_DIRECT(kernel_create, zeKernelCreate);
    FILL_DIRECT(kernel_destroy, zeKernelDestroy);
    FILL_DIRECT(kernel_set_argument_value, zeKernelSetArgumentValue);
    FILL_DIRECT(kernel_set_group_size, zeKernelSetGroupSize);
    FILL_DIRECT(queue_create, zeCommandQueueCreate);
    FILL_DIRECT(queue_destroy, zeCommandQueueDestroy);
    FILL_DIRECT(queue_execute, zeCommandQueueExecuteCommandLists);
    FILL_DIRECT(queue_synchronize, zeCommandQueueSynchronize);
    FILL_DIRECT(list_create, zeCommandListCreate);
    FILL_DIRECT(list_destroy, zeCommandListDestroy);
    FILL_DIRECT(list_close, zeCommandListClose);
    FILL_DIRECT(append_launch_kernel, zeCommandListAppendLaunchKernel);
    FILL_DIRECT(append_memory_copy, zeCommandListAppendMemoryCopy);
    FILL_DIRECT(image_get_properties, zeImageGetProperties);
}

static void fill_dlsym(struct api *api, void *handle)
{
    FILL_DLSYM(init, zeInit);
    FILL_DLSYM(driver_get, zeDriverGet);
    FILL_DLSYM(device_get, zeDeviceGet);
    FILL_DLSYM(device_get_properties, zeDeviceGetProperties);
    FILL_DLSYM(context_create, zeContextCreate);
    FILL_DLSYM(context_destroy, zeContextDestroy);
    FILL_DLSYM(mem_alloc_shared, zeMemAllocShared);
    FILL_DLSYM(mem_free, zeMemFree);
    FILL_DLSYM(module_create, zeModuleCreate);
    FILL_DLSYM(module_destroy, zeModuleDestroy);
    FILL_DLSYM(kernel_create, zeKernelCreate);
    FILL_DLSYM(kernel_destroy, zeKernelDestroy);
    FILL_DLSYM(kernel_set_argument_value, zeKernelSetArgumentValue);
    FILL_DLSYM(kernel_set_group_size, zeKernelSetGroupSize);
    FILL_DLSYM(queue_create, zeCommandQueueCreate);
    FILL_DLSYM(queue_destroy, zeCommandQueueDestroy);
    FILL_DLSYM(queue_execute, zeCommandQueueExecuteCommandLists);
    FILL_DLSYM(queue_synchronize, zeCommandQueueSynchronize);
    FILL_DLSYM(list_create, zeCommandListCreate);
    FILL_DLSYM(list_destroy, zeCommandListDestroy);
    FILL_DLSYM(list_close, zeCommandListClose);
    FILL_DLSYM(append_launch_kernel, zeCommandListAppendLaunchKernel);
    FILL_DLSYM(append_memory_copy, zeCommandListAppendMemoryCopy);
    FILL_DLSYM(image_get_properties, zeImageGetProperties);
}

#define GET_TABLE(getter_name, type, table)                                              \
    do {                                                                                 \
        ze_result_t (*getter)(ze_api_version_t, type *);                                 \
        void *s = lookup(handle, getter_name);                                           \
        memcpy(&getter, &s, sizeof(s));                                                  \
        memset(&table, 0, sizeof(table));                                                \
        if (calls_file != NULL)                                                          \
            fprintf(calls_file, "%s\n", getter_name);                                   \
        if (getter(ZE_API_VERSION_CURRENT, &table) != ZE_RESULT_SUCCESS) {              \
            fprintf(stderr, "l0_workload: %s failed\n", getter_name);                    \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

static void fill_tables(struct api *api, void *handle)
{
    ze_global_dditable_t global;
    ze_driver_dditable_t driver;
    ze_device_dditable_t device;
    ze_context_dditable_t context;
    ze_mem_dditable_t mem;
    ze_module_dditable_t module;
    ze_kernel_dditable_t kernel;
    ze_command_queue_dditable_t queue;
    ze_command_list_dditable_t list;
    ze_image_dditable_t image;
    ze_result_t (*loader_init)(void);
    void *s = lookup(handle, "zeLoaderInit");

    /* What a static loader does first: the getters answer only once the loader has drivers. */
    memcpy(&loader_init, &s, sizeof(s));
    if (calls_file != NULL)
        fprintf(calls_file, "zeLoaderInit\n");
    if (loader_init() != ZE_RESULT_SUCCESS) {
        fprintf(stderr, "l0_workload: zeLoaderInit failed\n");
        exit(1);
    }
    GET_TABLE("zeGetGlobalProcAddrTable", ze_global_dditable_t, global);
    GET_TABLE("zeGetDriverProcAddrTable", ze_driver_dditable_t, driver);
    GET_TABLE("zeGetDeviceProcAddrTable", ze_device_dditable_t, device);
    GET_TABLE("zeGetContextProcAddrTable", ze_context_dditable_t, context);
    GET_TABLE("zeGetMemProcAddrTable", ze_mem_dditable_t, mem);
    GET_TABLE("zeGetModuleProcAddrTable", ze_module_dditable_t, module);
    GET_TABLE("zeGetKernelProcAddrTable", ze_kernel_dditable_t, kernel);
    GET_TABLE("zeGetCommandQueueProcAddrTable", ze_command_queue_dditable_t, queue);
    GET_TABLE("zeGetCommandListProcAddrTable", ze_command_list_dditable_t, list);
    GET_TABLE("zeGetImageProcAddrTable", ze_image_dditable_t, image);
    api->init = global.pfnInit;
    api->driver_get = driver.pfnGet;
    api->device_get = device.pfnGet;
    api->device_get_properties = device.pfnGetProperties;
    api->context_create = context.pfnCreate;
    api->context_destroy = context.pfnDestroy;
    api->mem_alloc_shared = mem.pfnAllocShared;
    api->mem_free = mem.pfnFree;
    api->module_create = module.pfnCreate;
    api->module_destroy = module.pfnDestroy;
    api->kernel_create = kernel.pfnCreate;
    api->kernel_destroy = kernel.pfnDestroy;
    api->kernel_set_argument_value = kernel.pfnSetArgumentValue;
    api->kernel_set_group_size = kernel.pfnSetGroupSize;
    api->queue_create = queue.pfnCreate;
    api->queue_destroy = queue.pfnDestroy;
    api->queue_execute = queue.pfnExecuteCommandLists;
    api->queue_synchronize = queue.pfnSynchronize;
    api->list_create = list.pfnCreate;
    api->list_destroy = list.pfnDestroy;
    api->list_close = list.pfnClose;
    api->append_launch_kernel = list.pfnAppendLaunchKernel;
    api->append_memory_copy = list.pfnAppendMemoryCopy;
    api->image_get_properties = image.pfnGetProperties;
}

/* Every non-NULL pointer of the api struct must lie in the object at `path`. */
static void check_origin(const struct api *api, const char *path)
{
    char want[PATH_MAX], got[PATH_MAX];
    const unsigned char *bytes = (const unsigned char *) api;

    if (realpath(path, want) == NULL) {
        fprintf(stderr, "l0_workload: cannot resolve path=%s\n", path);
        exit(1);
    }
    for (size_t offset = 0; offset < sizeof(*api); offset += sizeof(void *)) {
        void *function;
        Dl_info info;

        memcpy(&function, bytes + offset, sizeof(function));
        got[0] = '\0';
        if (function == NULL)
            continue; /* a table entry the loader does not provide, with or without the shim */
        if (dladdr(function, &info) == 0 || info.dli_fname == NULL ||
            realpath(info.dli_fname, got) == NULL || strcmp(got, want) != 0) {
            fprintf(stderr, "l0_workload: function %zu lies outside %s: in %s\n",
                    offset / sizeof(void *), want, got);
            failures++;
        }
    }
}

static int run(const struct api *a)
{
    ze_driver_handle_t driver;
    ze_device_handle_t device;
    ze_context_handle_t context;
    uint32_t count = 0;
    ze_result_t r;

    r = CALL(a, init, "zeInit", 0);
    printf("zeInit=0x%x\n", (unsigned) r);
    if (r != ZE_RESULT_SUCCESS)
        return 1;
    expect(CALL(a, driver_get, "zeDriverGet", &count, NULL) == ZE_RESULT_SUCCESS && count > 0,
           "driver count");
    count = 1;
    expect(CALL(a, driver_get, "zeDriverGet", &count, &driver) == ZE_RESULT_SUCCESS, "driver");
    count = 1;
    expect(CALL(a, device_get, "zeDeviceGet", driver, &count, &device) == ZE_RESULT_SUCCESS,
           "device");
    ze_device_properties_t properties = { .stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES };
    expect(CALL(a, device_get_properties, "zeDeviceGetProperties", device, &properties) ==
           ZE_RESULT_SUCCESS, "device properties");
    printf("device=%s type=%u\n", properties.name, (unsigned) properties.type);

    /* A descriptor that only `full` mode decodes (the device may not support images). */
    ze_image_desc_t image_desc = { .stype = ZE_STRUCTURE_TYPE_IMAGE_DESC, .type = ZE_IMAGE_TYPE_2D,
                                   .width = 64, .height = 32, .depth = 1 };
    ze_image_properties_t image_properties = { .stype = ZE_STRUCTURE_TYPE_IMAGE_PROPERTIES };
    if (a->image_get_properties != NULL) { /* a table entry may be absent */
        r = CALL(a, image_get_properties, "zeImageGetProperties", device, &image_desc,
                 &image_properties);
        printf("image_properties=0x%x\n", (unsigned) r);
    } else {
        printf("image_properties=absent\n");
    }

    ze_context_desc_t context_desc = { .stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC };
    expect(CALL(a, context_create, "zeContextCreate", driver, &context_desc, &context) ==
           ZE_RESULT_SUCCESS, "context");

    ze_device_mem_alloc_desc_t device_desc = { .stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC };
    ze_host_mem_alloc_desc_t host_desc = { .stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC };
    float *x = NULL, *y = NULL, *z = NULL, *w = NULL;
    size_t bytes = ELEMENTS * sizeof(float);
    expect(CALL(a, mem_alloc_shared, "zeMemAllocShared", context, &device_desc, &host_desc, bytes,
                64, device, (void **) &x) == ZE_RESULT_SUCCESS, "alloc x");
    expect(CALL(a, mem_alloc_shared, "zeMemAllocShared", context, &device_desc, &host_desc, bytes,
                64, device, (void **) &y) == ZE_RESULT_SUCCESS, "alloc y");
    expect(CALL(a, mem_alloc_shared, "zeMemAllocShared", context, &device_desc, &host_desc, bytes,
                64, device, (void **) &z) == ZE_RESULT_SUCCESS, "alloc z");
    expect(CALL(a, mem_alloc_shared, "zeMemAllocShared", context, &device_desc, &host_desc, bytes,
                64, device, (void **) &w) == ZE_RESULT_SUCCESS, "alloc w");
    if (failures)
        return 1;
    for (int i = 0; i < ELEMENTS; i++) {
        x[i] = (float) i;
        y[i] = (float) (2 * i + 1);
        z[i] = w[i] = 0.0f;
    }

    static const uint8_t binary[] = { 0x03, 0x02, 0x23, 0x07 };
    ze_module_desc_t module_desc = { .stype = ZE_STRUCTURE_TYPE_MODULE_DESC,
                                     .format = ZE_MODULE_FORMAT_IL_SPIRV,
                                     .inputSize = sizeof(binary), .pInputModule = binary };
    ze_module_handle_t module;
    expect(CALL(a, module_create, "zeModuleCreate", context, device, &module_desc, &module, NULL) ==
           ZE_RESULT_SUCCESS, "module");
    ze_kernel_desc_t kernel_desc = { .stype = ZE_STRUCTURE_TYPE_KERNEL_DESC,
                                     .pKernelName = "zesim_vadd_f32" };
    ze_kernel_handle_t kernel;
    expect(CALL(a, kernel_create, "zeKernelCreate", module, &kernel_desc, &kernel) ==
           ZE_RESULT_SUCCESS, "kernel");
    expect(CALL(a, kernel_set_argument_value, "zeKernelSetArgumentValue", kernel, 0, sizeof(x),
                &x) == ZE_RESULT_SUCCESS, "arg 0");
    expect(CALL(a, kernel_set_argument_value, "zeKernelSetArgumentValue", kernel, 1, sizeof(y),
                &y) == ZE_RESULT_SUCCESS, "arg 1");
    expect(CALL(a, kernel_set_argument_value, "zeKernelSetArgumentValue", kernel, 2, sizeof(z),
                &z) == ZE_RESULT_SUCCESS, "arg 2");
    /* The error path: a wrong argument size; the code must be the same traced or not. */
    r = CALL(a, kernel_set_argument_value, "zeKernelSetArgumentValue", kernel, 0, 3, &x);
    printf("bad_argument_size=0x%x\n", (unsigned) r);
    expect(CALL(a, kernel_set_group_size, "zeKernelSetGroupSize", kernel, 64, 1, 1) ==
           ZE_RESULT_SUCCESS, "group size");

    ze_command_queue_desc_t queue_desc = { .stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                           .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS };
    ze_command_queue_handle_t queue;
    expect(CALL(a, queue_create, "zeCommandQueueCreate", context, device, &queue_desc, &queue) ==
           ZE_RESULT_SUCCESS, "queue");
    ze_command_list_desc_t list_desc = { .stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC };
    ze_command_list_handle_t list;
    expect(CALL(a, list_create, "zeCommandListCreate", context, device, &list_desc, &list) ==
           ZE_RESULT_SUCCESS, "list");
    ze_group_count_t groups = { ELEMENTS / 64, 1, 1 };
    expect(CALL(a, append_launch_kernel, "zeCommandListAppendLaunchKernel", list, kernel, &groups,
                NULL, 0, NULL) == ZE_RESULT_SUCCESS, "launch");
    expect(CALL(a, append_memory_copy, "zeCommandListAppendMemoryCopy", list, w, x, bytes, NULL, 0,
                NULL) == ZE_RESULT_SUCCESS, "copy");
    expect(CALL(a, list_close, "zeCommandListClose", list) == ZE_RESULT_SUCCESS, "close");
    expect(CALL(a, queue_execute, "zeCommandQueueExecuteCommandLists", queue, 1, &list, NULL) ==
           ZE_RESULT_SUCCESS, "execute");
    expect(CALL(a, queue_synchronize, "zeCommandQueueSynchronize", queue, UINT64_MAX) ==
           ZE_RESULT_SUCCESS, "synchronize");

    double sum = 0;
    int wrong = 0;
    for (int i = 0; i < ELEMENTS; i++) {
        sum += z[i];
        wrong += z[i] != x[i] + y[i] || w[i] != x[i];
    }
    printf("vadd_sum=%.1f wrong=%d\n", sum, wrong);
    expect(wrong == 0, "computed values");

    expect(CALL(a, list_destroy, "zeCommandListDestroy", list) == ZE_RESULT_SUCCESS, "list destroy");
    expect(CALL(a, queue_destroy, "zeCommandQueueDestroy", queue) == ZE_RESULT_SUCCESS,
           "queue destroy");
    expect(CALL(a, kernel_destroy, "zeKernelDestroy", kernel) == ZE_RESULT_SUCCESS, "kernel destroy");
    expect(CALL(a, module_destroy, "zeModuleDestroy", module) == ZE_RESULT_SUCCESS, "module destroy");
    expect(CALL(a, mem_free, "zeMemFree", context, x) == ZE_RESULT_SUCCESS, "free x");
    expect(CALL(a, mem_free, "zeMemFree", context, y) == ZE_RESULT_SUCCESS, "free y");
    expect(CALL(a, mem_free, "zeMemFree", context, z) == ZE_RESULT_SUCCESS, "free z");
    expect(CALL(a, mem_free, "zeMemFree", context, w) == ZE_RESULT_SUCCESS, "free w");
    expect(CALL(a, context_destroy, "zeContextDestroy", context) == ZE_RESULT_SUCCESS,
           "context destroy");
    return failures ? 1 : 0;
}

/* A child that keeps using Level Zero without exec (its calls are not listed in --calls). */
static int run_child(const struct api *a)
{
    int child_status;
    pid_t pid;

    fflush(stdout);
    if (calls_file != NULL)
        fflush(calls_file);
    pid = fork();
    if (pid < 0)
        return 1;
    if (pid == 0) {
        uint32_t count = 0;
        ze_result_t init = a->init(0);
        ze_result_t get = a->driver_get(&count, NULL);

        _exit(init == ZE_RESULT_SUCCESS && get == ZE_RESULT_SUCCESS && count > 0 ? 0 : 1);
    }
    if (waitpid(pid, &child_status, 0) != pid)
        return 1;
    child_status = WIFEXITED(child_status) ? WEXITSTATUS(child_status)
                                           : 128 + WTERMSIG(child_status);
    printf("fork_child=%d\n", child_status);
    return child_status == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    const char *origin = NULL;
    int expect_uninit = 0, fork_after = 0;
    struct api api;
    void *handle = NULL;

    if (argc < 2) {
        fprintf(stderr, "usage: l0_workload direct|dlsym|tables [--expect-origin PATH] "
                        "[--calls FILE] [--expect-uninit]\n");
        return 2;
    }
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--expect-origin") == 0 && i + 1 < argc) {
            origin = argv[++i];
        } else if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc) {
            calls_file = fopen(argv[++i], "w");
            if (calls_file == NULL)
                return 2;
        } else if (strcmp(argv[i], "--expect-uninit") == 0) {
            expect_uninit = 1;
        } else if (strcmp(argv[i], "--fork") == 0) {
            fork_after = 1;
        } else {
            return 2;
        }
    }
    if (strcmp(argv[1], "direct") == 0) {
        fill_direct(&api);
    } else {
        handle = dlopen("libze_loader.so.1", RTLD_NOW | RTLD_LOCAL);
        if (handle == NULL) {
            fprintf(stderr, "l0_workload: dlopen failed: %s\n", dlerror());
            return 1;
        }
        if (strcmp(argv[1], "dlsym") == 0)
            fill_dlsym(&api, handle);
        else
            fill_tables(&api, handle);
    }
    if (origin != NULL)
        check_origin(&api, origin);

    int status;
    if (expect_uninit) {
        /* Every call is refused, and the shim says so only once. */
        uint32_t count = 0;
        ze_result_t first = CALL(&api, init, "zeInit", 0);
        ze_result_t second = CALL(&api, init, "zeInit", 0);
        ze_result_t third = CALL(&api, driver_get, "zeDriverGet", &count, NULL);
        printf("zeInit=0x%x zeInit=0x%x zeDriverGet=0x%x\n", (unsigned) first,
               (unsigned) second, (unsigned) third);
        status = first == ZE_RESULT_ERROR_UNINITIALIZED && second == first && third == first ? 0 : 1;
    } else {
        status = run(&api);
    }
    if (fork_after && status == 0)
        status = run_child(&api);
    if (calls_file != NULL)
        fclose(calls_file);
    /* The handle stays open: the library may still run threads of its own. */
    return status || failures ? 1 : 0;
}
