/*
 * sim_module.c: modules, build logs and kernels.
 *
 * Any module binary is accepted (kept as a copy for zeModuleGetNativeBinary). Kernels are known
 * by name (docs/interface.md, "The simulated device"): zesim_spin, zesim_fill_u32 and zesim_vadd_f32 have fixed argument lists
 * that are checked like a real kernel's; any other name is an application kernel that takes any
 * arguments (ignored) and runs ZESIM_NS_PER_GROUP per work group. A kernel owns its
 * argument values; a launch copies them (sim_list.c), so setting arguments after an append does
 * not change what was appended, as on a real device.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

static const char *const known_kernel_names[] = {"zesim_spin", "zesim_fill_u32", "zesim_vadd_f32"};

struct known_kernel {
    enum sim_kernel_kind kind;
    uint32_t arg_count;
    uint32_t arg_sizes[3];
};

static struct known_kernel describe(const char *name)
{
    if (strcmp(name, "zesim_spin") == 0)
        return (struct known_kernel){SIM_KERNEL_SPIN, 1, {8, 0, 0}};
    if (strcmp(name, "zesim_fill_u32") == 0)
        return (struct known_kernel){SIM_KERNEL_FILL_U32, 2, {sizeof(void *), 4, 0}};
    if (strcmp(name, "zesim_vadd_f32") == 0)
        return (struct known_kernel){
            SIM_KERNEL_VADD_F32, 3, {sizeof(void *), sizeof(void *), sizeof(void *)}};
    return (struct known_kernel){SIM_KERNEL_GENERIC, 0, {0, 0, 0}};
}

ze_result_t sim_module_create(ze_context_handle_t context, ze_device_handle_t device,
                              const ze_module_desc_t *desc, ze_module_handle_t *out,
                              ze_module_build_log_handle_t *build_log)
{
    ze_result_t status = sim_handle_check(context, SIM_KIND_CONTEXT);
    if (status == ZE_RESULT_SUCCESS)
        status = sim_handle_check(device, SIM_KIND_DEVICE);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!desc || !out || !desc->pInputModule)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (desc->inputSize == 0)
        return ZE_RESULT_ERROR_INVALID_SIZE;
    if (desc->format != ZE_MODULE_FORMAT_IL_SPIRV && desc->format != ZE_MODULE_FORMAT_NATIVE)
        return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    struct sim_module *module = calloc(1, sizeof(*module));
    uint8_t *binary = malloc(desc->inputSize);
    struct sim_build_log *log = build_log ? calloc(1, sizeof(*log)) : NULL;
    if (!module || !binary || (build_log && !log)) {
        free(module);
        free(binary);
        free(log);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    memcpy(binary, desc->pInputModule, desc->inputSize);
    module->context = (struct sim_context *)context;
    module->device = (struct sim_device *)device;
    module->binary = binary;
    module->binary_size = desc->inputSize;
    sim_handle_add(module, SIM_KIND_MODULE);
    *out = (ze_module_handle_t)module;
    if (build_log) {
        sim_handle_add(log, SIM_KIND_BUILD_LOG);
        *build_log = (ze_module_build_log_handle_t)log;
    }
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_module_destroy(ze_module_handle_t handle)
{
    ze_result_t status = sim_handle_check(handle, SIM_KIND_MODULE);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    struct sim_module *module = (struct sim_module *)handle;
    sim_handle_remove(module);
    free(module->binary);
    free(module);
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_module_build_log_destroy(ze_module_build_log_handle_t handle)
{
    ze_result_t status = sim_handle_check(handle, SIM_KIND_BUILD_LOG);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    sim_handle_remove(handle);
    free(handle);
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_module_build_log_get_string(ze_module_build_log_handle_t handle, size_t *size,
                                            char *log)
{
    ze_result_t status = sim_handle_check(handle, SIM_KIND_BUILD_LOG);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!size)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (!log || *size == 0) {
        *size = 1; /* the empty log of a build that always succeeds */
        return ZE_RESULT_SUCCESS;
    }
    log[0] = '\0';
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_module_get_native_binary(ze_module_handle_t handle, size_t *size, uint8_t *binary)
{
    ze_result_t status = sim_handle_check(handle, SIM_KIND_MODULE);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!size)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    const struct sim_module *module = (const struct sim_module *)handle;
    if (binary)
        memcpy(binary, module->binary, *size < module->binary_size ? *size : module->binary_size);
    *size = module->binary_size;
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_module_get_kernel_names(ze_module_handle_t handle, uint32_t *count,
                                        const char **names)
{
    ze_result_t status = sim_handle_check(handle, SIM_KIND_MODULE);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!count)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    uint32_t total = sizeof(known_kernel_names) / sizeof(known_kernel_names[0]);
    if (*count == 0 || !names) {
        *count = total;
        return ZE_RESULT_SUCCESS;
    }
    uint32_t n = *count < total ? *count : total;
    for (uint32_t i = 0; i < n; i++)
        names[i] = known_kernel_names[i];
    *count = n;
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_module_get_properties(ze_module_handle_t handle, ze_module_properties_t *props)
{
    ze_result_t status = sim_handle_check(handle, SIM_KIND_MODULE);
    if (status == ZE_RESULT_SUCCESS && !props)
        status = ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (status == ZE_RESULT_SUCCESS)
        props->flags = 0;
    return status;
}

ze_result_t sim_kernel_create(ze_module_handle_t module, const ze_kernel_desc_t *desc,
                              ze_kernel_handle_t *out)
{
    static uint32_t next_kernel_id = 1;
    ze_result_t status = sim_handle_check(module, SIM_KIND_MODULE);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!desc || !out || !desc->pKernelName)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (desc->pKernelName[0] == '\0')
        return ZE_RESULT_ERROR_INVALID_KERNEL_NAME;
    struct sim_kernel *kernel = calloc(1, sizeof(*kernel));
    if (!kernel)
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    kernel->module = (struct sim_module *)module;
    kernel->id = __atomic_fetch_add(&next_kernel_id, 1, __ATOMIC_RELAXED);
    pthread_mutex_init(&kernel->mutex, NULL);
    snprintf(kernel->state.name, sizeof(kernel->state.name), "%s", desc->pKernelName);
    kernel->state.kind = describe(kernel->state.name).kind;
    kernel->state.group_size[0] = kernel->state.group_size[1] = kernel->state.group_size[2] = 1;
    sim_handle_add(kernel, SIM_KIND_KERNEL);
    *out = (ze_kernel_handle_t)kernel;
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_kernel_destroy(ze_kernel_handle_t handle)
{
    ze_result_t status = sim_handle_check(handle, SIM_KIND_KERNEL);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    struct sim_kernel *kernel = (struct sim_kernel *)handle;
    sim_handle_remove(kernel);
    pthread_mutex_destroy(&kernel->mutex);
    free(kernel);
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_kernel_set_cache_config(ze_kernel_handle_t handle, ze_cache_config_flags_t flags)
{
    (void)flags;
    return sim_handle_check(handle, SIM_KIND_KERNEL);
}

ze_result_t sim_kernel_set_group_size(ze_kernel_handle_t handle, uint32_t x, uint32_t y, uint32_t z)
{
    ze_result_t status = sim_handle_check(handle, SIM_KIND_KERNEL);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (x == 0 || y == 0 || z == 0 || x > 1024 || y > 1024 || z > 1024 ||
        (uint64_t)x * y * z > 1024)
        return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
    struct sim_kernel *kernel = (struct sim_kernel *)handle;
    pthread_mutex_lock(&kernel->mutex);
    kernel->state.group_size[0] = x;
    kernel->state.group_size[1] = y;
    kernel->state.group_size[2] = z;
    pthread_mutex_unlock(&kernel->mutex);
    return ZE_RESULT_SUCCESS;
}

/* Largest divisor of n that is at most limit. */
static uint32_t largest_divisor(uint32_t n, uint32_t limit)
{
    for (uint32_t d = limit < n ? limit : n; d > 1; d--) {
        if (n % d == 0)
            return d;
    }
    return 1;
}

ze_result_t sim_kernel_suggest_group_size(ze_kernel_handle_t handle, uint32_t gx, uint32_t gy,
                                          uint32_t gz, uint32_t *x, uint32_t *y, uint32_t *z)
{
    ze_result_t status = sim_handle_check(handle, SIM_KIND_KERNEL);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!x || !y || !z)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (gx == 0 || gy == 0 || gz == 0)
        return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
    /* Group sizes that divide the global size exactly, as large as 256 work items allow. */
    *x = largest_divisor(gx, 256);
    *y = largest_divisor(gy, 256 / *x);
    *z = largest_divisor(gz, 256 / (*x * *y));
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_kernel_suggest_max_cooperative_group_count(ze_kernel_handle_t handle,
                                                           uint32_t *count)
{
    ze_result_t status = sim_handle_check(handle, SIM_KIND_KERNEL);
    if (status == ZE_RESULT_SUCCESS && !count)
        status = ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (status == ZE_RESULT_SUCCESS)
        *count = 56 * 8;
    return status;
}

ze_result_t sim_kernel_set_argument_value(ze_kernel_handle_t handle, uint32_t index, size_t size,
                                          const void *value)
{
    ze_result_t status = sim_handle_check(handle, SIM_KIND_KERNEL);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    struct sim_kernel *kernel = (struct sim_kernel *)handle;
    struct known_kernel known = describe(kernel->state.name);
    if (known.kind == SIM_KERNEL_GENERIC) {
        /* An application kernel may take any number of arguments of any size (SYCL captures
         * whole structures); the simulator does not read them, so it keeps none. */
        return ZE_RESULT_SUCCESS;
    }
    if (index >= known.arg_count)
        return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX;
    if (size != known.arg_sizes[index])
        return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
    pthread_mutex_lock(&kernel->mutex);
    memset(kernel->state.args[index], 0, SIM_MAX_ARG_BYTES);
    if (value) /* NULL means a NULL pointer argument (or local memory) */
        memcpy(kernel->state.args[index], value, size);
    pthread_mutex_unlock(&kernel->mutex);
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_kernel_set_indirect_access(ze_kernel_handle_t handle,
                                           ze_kernel_indirect_access_flags_t flags)
{
    (void)flags;
    return sim_handle_check(handle, SIM_KIND_KERNEL);
}

ze_result_t sim_kernel_get_indirect_access(ze_kernel_handle_t handle,
                                           ze_kernel_indirect_access_flags_t *flags)
{
    ze_result_t status = sim_handle_check(handle, SIM_KIND_KERNEL);
    if (status == ZE_RESULT_SUCCESS && !flags)
        status = ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (status == ZE_RESULT_SUCCESS)
        *flags = 0;
    return status;
}

ze_result_t sim_kernel_get_source_attributes(ze_kernel_handle_t handle, uint32_t *size,
                                             char **string)
{
    ze_result_t status = sim_handle_check(handle, SIM_KIND_KERNEL);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!size)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (string && *string && *size > 0)
        (*string)[0] = '\0';
    *size = 1;
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_kernel_get_properties(ze_kernel_handle_t handle, ze_kernel_properties_t *props)
{
    ze_result_t status = sim_handle_check(handle, SIM_KIND_KERNEL);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!props)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    const struct sim_kernel *kernel = (const struct sim_kernel *)handle;
    struct known_kernel known = describe(kernel->state.name);
    props->numKernelArgs = known.arg_count; /* unknown for application kernels: 0 */
    props->requiredGroupSizeX = props->requiredGroupSizeY = props->requiredGroupSizeZ = 0;
    props->requiredNumSubGroups = 0;
    props->requiredSubgroupSize = 0;
    props->maxSubgroupSize = SIM_KERNEL_SIMD;
    props->maxNumSubgroups = 64;
    props->localMemSize = 0;
    props->privateMemSize = 0;
    props->spillMemSize = 0;
    memset(&props->uuid, 0, sizeof(props->uuid));
    memcpy(props->uuid.kid, &kernel->id, sizeof(kernel->id));
    memcpy(props->uuid.mid, &kernel->module, sizeof(kernel->module));
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_kernel_get_name(ze_kernel_handle_t handle, size_t *size, char *name)
{
    ze_result_t status = sim_handle_check(handle, SIM_KIND_KERNEL);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!size)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    const struct sim_kernel *kernel = (const struct sim_kernel *)handle;
    size_t needed = strlen(kernel->state.name) + 1;
    if (!name || *size == 0) {
        *size = needed;
        return ZE_RESULT_SUCCESS;
    }
    size_t n = *size < needed ? *size : needed;
    memcpy(name, kernel->state.name, n - 1);
    name[n - 1] = '\0';
    *size = n;
    return ZE_RESULT_SUCCESS;
}

/* For sim_list.c: a consistent copy of the kernel's launch state. */
void sim_kernel_snapshot(struct sim_kernel *kernel, struct sim_kernel_state *state)
{
    pthread_mutex_lock(&kernel->mutex);
    *state = kernel->state;
    pthread_mutex_unlock(&kernel->mutex);
}
