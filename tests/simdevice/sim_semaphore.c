/*
 * sim_semaphore.c: external semaphores (spec 1.12, ZE_extension_external_semaphores), minimally.
 *
 * zeDeviceImportExternalSemaphoreExt gives a semaphore of the device whatever the descriptor
 * imports (there is no other API or process to share it with here): a 64-bit value, 0 at import.
 * zeCommandListAppendSignalExternalSemaphoreExt sets each semaphore's value (its signal
 * parameter's, or 1 more than it was when the parameter is 0) when the command runs;
 * zeCommandListAppendWaitExternalSemaphoreExt blocks its queue until each semaphore's value has
 * reached the wait parameter's (1 when 0). Both are ordinary commands otherwise: they wait on
 * their wait events, signal their signal event with their own timestamps, and write a truth line
 * (`semaphore_signal`, `semaphore_wait`). The entry points are built only against headers that
 * declare them; sim_semaphore_run serves the engine in every build.
 */
#include <stdlib.h>
#include <string.h>

#include "sim.h"

void sim_semaphore_run(struct sim_queue *queue, const struct sim_cmd *cmd)
{
    pthread_mutex_lock(&sim_lock);
    for (uint32_t i = 0; i < cmd->u.semaphore.count; i++) {
        struct sim_semaphore *semaphore = cmd->u.semaphore.semaphores[i];
        uint64_t value = cmd->u.semaphore.values[i];
        if (cmd->kind == SIM_CMD_SEMAPHORE_SIGNAL) {
            semaphore->value = value ? value : semaphore->value + 1;
            pthread_cond_broadcast(&sim_cond);
        } else {
            uint64_t wanted = value ? value : 1;
            while (semaphore->value < wanted && !queue->shutdown)
                pthread_cond_wait(&sim_cond, &sim_lock);
        }
    }
    pthread_mutex_unlock(&sim_lock);
}

#if SIM_HEADERS_AT_LEAST(1, 12)
ze_result_t sim_semaphore_import(ze_device_handle_t device,
                                 const ze_external_semaphore_ext_desc_t *desc,
                                 ze_external_semaphore_ext_handle_t *out)
{
    ze_result_t status = sim_handle_check(device, SIM_KIND_DEVICE);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (!desc || !out)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    struct sim_semaphore *semaphore = calloc(1, sizeof(*semaphore));
    if (!semaphore)
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    semaphore->device = (struct sim_device *)device;
    sim_handle_add(semaphore, SIM_KIND_SEMAPHORE);
    *out = (ze_external_semaphore_ext_handle_t)semaphore;
    return ZE_RESULT_SUCCESS;
}

ze_result_t sim_semaphore_release(ze_external_semaphore_ext_handle_t handle)
{
    ze_result_t status = sim_handle_check(handle, SIM_KIND_SEMAPHORE);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    sim_handle_remove(handle);
    free(handle);
    return ZE_RESULT_SUCCESS;
}

/* Both appends: the semaphores and one value each (the parameters apply to every semaphore). */
static ze_result_t append_semaphores(ze_command_list_handle_t list, enum sim_cmd_kind kind,
                                     const char *function, uint32_t count,
                                     ze_external_semaphore_ext_handle_t *semaphores,
                                     uint64_t value, ze_event_handle_t signal,
                                     uint32_t wait_count, ze_event_handle_t *waits)
{
    ze_result_t status = sim_list_check_append(list, signal, wait_count, waits);
    if (status != ZE_RESULT_SUCCESS)
        return status;
    if (count == 0 || !semaphores)
        return ZE_RESULT_ERROR_INVALID_SIZE;
    for (uint32_t i = 0; i < count; i++) {
        status = sim_handle_check(semaphores[i], SIM_KIND_SEMAPHORE);
        if (status != ZE_RESULT_SUCCESS)
            return status;
    }
    struct sim_cmd *cmd = sim_list_new_cmd(kind, function, signal, wait_count, waits);
    if (!cmd)
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    cmd->u.semaphore.semaphores = malloc(count * sizeof(*cmd->u.semaphore.semaphores));
    cmd->u.semaphore.values = malloc(count * sizeof(*cmd->u.semaphore.values));
    if (!cmd->u.semaphore.semaphores || !cmd->u.semaphore.values) {
        sim_cmd_free(cmd);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    cmd->u.semaphore.count = count;
    for (uint32_t i = 0; i < count; i++) {
        cmd->u.semaphore.semaphores[i] = (struct sim_semaphore *)semaphores[i];
        cmd->u.semaphore.values[i] = value;
    }
    return sim_list_commit(list, cmd);
}

ze_result_t sim_list_append_signal_semaphores(ze_command_list_handle_t list, uint32_t count,
                                              ze_external_semaphore_ext_handle_t *semaphores,
                                              ze_external_semaphore_signal_params_ext_t *params,
                                              ze_event_handle_t signal, uint32_t wait_count,
                                              ze_event_handle_t *waits)
{
    if (!params)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    return append_semaphores(list, SIM_CMD_SEMAPHORE_SIGNAL,
                             "zeCommandListAppendSignalExternalSemaphoreExt", count, semaphores,
                             params->value, signal, wait_count, waits);
}

ze_result_t sim_list_append_wait_semaphores(ze_command_list_handle_t list, uint32_t count,
                                            ze_external_semaphore_ext_handle_t *semaphores,
                                            ze_external_semaphore_wait_params_ext_t *params,
                                            ze_event_handle_t signal, uint32_t wait_count,
                                            ze_event_handle_t *waits)
{
    if (!params)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    return append_semaphores(list, SIM_CMD_SEMAPHORE_WAIT,
                             "zeCommandListAppendWaitExternalSemaphoreExt", count, semaphores,
                             params->value, signal, wait_count, waits);
}
#endif
