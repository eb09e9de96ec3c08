/*
 * sim_entry.h: the driver's entry points, one per Level Zero function it implements, grouped by
 * the module that implements them. sim_tables.c puts them into the dispatch tables; nothing else
 * calls them. Included by sim.h.
 */
#ifndef ZESIM_SIM_ENTRY_H
#define ZESIM_SIM_ENTRY_H

/* sim_driver.c */
ze_result_t sim_init(ze_init_flags_t flags);
#if SIM_HEADERS_AT_LEAST(1, 10)
ze_result_t sim_init_drivers(uint32_t *count, ze_driver_handle_t *drivers,
                             ze_init_driver_type_desc_t *desc);
#endif
ze_result_t sim_driver_get(uint32_t *count, ze_driver_handle_t *drivers);
ze_result_t sim_driver_get_api_version(ze_driver_handle_t driver, ze_api_version_t *version);
ze_result_t sim_driver_get_properties(ze_driver_handle_t driver, ze_driver_properties_t *props);
ze_result_t sim_driver_get_ipc_properties(ze_driver_handle_t driver,
                                          ze_driver_ipc_properties_t *props);
ze_result_t sim_driver_get_extension_properties(ze_driver_handle_t driver, uint32_t *count,
                                                ze_driver_extension_properties_t *props);
ze_result_t sim_driver_get_extension_function_address(ze_driver_handle_t driver, const char *name,
                                                      void **function);
/* The name of the driver's own extension function, which no Level Zero header declares:
 * ze_result_t (ze_driver_handle_t driver, uint32_t *count) gives the number of devices. */
#define SIM_EXT_DEVICE_COUNT "zexSimulatorGetDeviceCount"
ze_result_t sim_context_create_ex(ze_driver_handle_t driver, const ze_context_desc_t *desc,
                                  uint32_t device_count, ze_device_handle_t *devices,
                                  ze_context_handle_t *out);
ze_result_t sim_context_create(ze_driver_handle_t driver, const ze_context_desc_t *desc,
                               ze_context_handle_t *out);
ze_result_t sim_context_destroy(ze_context_handle_t handle);
ze_result_t sim_context_get_status(ze_context_handle_t handle);
ze_result_t sim_context_system_barrier(ze_context_handle_t handle, ze_device_handle_t device);
ze_result_t sim_context_make_memory_resident(ze_context_handle_t handle, ze_device_handle_t device,
                                             void *ptr, size_t size);

/* sim_device.c */
ze_result_t sim_device_get(ze_driver_handle_t driver, uint32_t *count, ze_device_handle_t *devices);
ze_result_t sim_device_get_sub_devices(ze_device_handle_t handle, uint32_t *count,
                                       ze_device_handle_t *sub_devices);
ze_result_t sim_device_get_properties(ze_device_handle_t handle, ze_device_properties_t *props);
ze_result_t sim_device_get_compute_properties(ze_device_handle_t handle,
                                              ze_device_compute_properties_t *props);
ze_result_t sim_device_get_module_properties(ze_device_handle_t handle,
                                             ze_device_module_properties_t *props);
ze_result_t sim_device_get_queue_group_properties(ze_device_handle_t handle, uint32_t *count,
                                                  ze_command_queue_group_properties_t *props);
ze_result_t sim_device_get_memory_properties(ze_device_handle_t handle, uint32_t *count,
                                             ze_device_memory_properties_t *props);
ze_result_t sim_device_get_memory_access_properties(ze_device_handle_t handle,
                                                    ze_device_memory_access_properties_t *props);
ze_result_t sim_device_get_cache_properties(ze_device_handle_t handle, uint32_t *count,
                                            ze_device_cache_properties_t *props);
ze_result_t sim_device_get_image_properties(ze_device_handle_t handle,
                                            ze_device_image_properties_t *props);
ze_result_t
sim_device_get_external_memory_properties(ze_device_handle_t handle,
                                          ze_device_external_memory_properties_t *props);
ze_result_t sim_device_get_p2p_properties(ze_device_handle_t handle, ze_device_handle_t peer,
                                          ze_device_p2p_properties_t *props);
ze_result_t sim_device_can_access_peer(ze_device_handle_t handle, ze_device_handle_t peer,
                                       ze_bool_t *value);
ze_result_t sim_device_get_status(ze_device_handle_t handle);
ze_result_t sim_device_get_global_timestamps(ze_device_handle_t handle, uint64_t *host_timestamp,
                                             uint64_t *device_timestamp);

/* sim_memory.c */
ze_result_t sim_mem_alloc_shared(ze_context_handle_t context,
                                 const ze_device_mem_alloc_desc_t *device_desc,
                                 const ze_host_mem_alloc_desc_t *host_desc, size_t size,
                                 size_t alignment, ze_device_handle_t device, void **out);
ze_result_t sim_mem_alloc_device(ze_context_handle_t context,
                                 const ze_device_mem_alloc_desc_t *desc, size_t size,
                                 size_t alignment, ze_device_handle_t device, void **out);
ze_result_t sim_mem_alloc_host(ze_context_handle_t context, const ze_host_mem_alloc_desc_t *desc,
                               size_t size, size_t alignment, void **out);
ze_result_t sim_mem_free(ze_context_handle_t context, void *ptr);
ze_result_t sim_mem_free_ext(ze_context_handle_t context, const ze_memory_free_ext_desc_t *desc,
                             void *ptr);
ze_result_t sim_mem_get_alloc_properties(ze_context_handle_t context, const void *ptr,
                                         ze_memory_allocation_properties_t *props,
                                         ze_device_handle_t *device);
ze_result_t sim_mem_get_address_range(ze_context_handle_t context, const void *ptr, void **base,
                                      size_t *size);

/* sim_module.c */
ze_result_t sim_module_create(ze_context_handle_t context, ze_device_handle_t device,
                              const ze_module_desc_t *desc, ze_module_handle_t *out,
                              ze_module_build_log_handle_t *build_log);
ze_result_t sim_module_destroy(ze_module_handle_t handle);
ze_result_t sim_module_build_log_destroy(ze_module_build_log_handle_t handle);
ze_result_t sim_module_build_log_get_string(ze_module_build_log_handle_t handle, size_t *size,
                                            char *log);
ze_result_t sim_module_get_native_binary(ze_module_handle_t handle, size_t *size, uint8_t *binary);
ze_result_t sim_module_get_kernel_names(ze_module_handle_t handle, uint32_t *count,
                                        const char **names);
ze_result_t sim_module_get_properties(ze_module_handle_t handle, ze_module_properties_t *props);
ze_result_t sim_kernel_create(ze_module_handle_t module, const ze_kernel_desc_t *desc,
                              ze_kernel_handle_t *out);
ze_result_t sim_kernel_destroy(ze_kernel_handle_t handle);
ze_result_t sim_kernel_set_cache_config(ze_kernel_handle_t handle, ze_cache_config_flags_t flags);
ze_result_t sim_kernel_set_group_size(ze_kernel_handle_t handle, uint32_t x, uint32_t y,
                                      uint32_t z);
ze_result_t sim_kernel_suggest_group_size(ze_kernel_handle_t handle, uint32_t gx, uint32_t gy,
                                          uint32_t gz, uint32_t *x, uint32_t *y, uint32_t *z);
ze_result_t sim_kernel_suggest_max_cooperative_group_count(ze_kernel_handle_t handle,
                                                           uint32_t *count);
ze_result_t sim_kernel_set_argument_value(ze_kernel_handle_t handle, uint32_t index, size_t size,
                                          const void *value);
ze_result_t sim_kernel_set_indirect_access(ze_kernel_handle_t handle,
                                           ze_kernel_indirect_access_flags_t flags);
ze_result_t sim_kernel_get_indirect_access(ze_kernel_handle_t handle,
                                           ze_kernel_indirect_access_flags_t *flags);
ze_result_t sim_kernel_get_source_attributes(ze_kernel_handle_t handle, uint32_t *size,
                                             char **string);
ze_result_t sim_kernel_get_properties(ze_kernel_handle_t handle, ze_kernel_properties_t *props);
ze_result_t sim_kernel_get_name(ze_kernel_handle_t handle, size_t *size, char *name);

/* sim_event.c */
ze_result_t sim_event_pool_create(ze_context_handle_t context, const ze_event_pool_desc_t *desc,
                                  uint32_t device_count, ze_device_handle_t *devices,
                                  ze_event_pool_handle_t *out);
ze_result_t sim_event_pool_destroy(ze_event_pool_handle_t handle);
ze_result_t sim_event_create(ze_event_pool_handle_t pool_handle, const ze_event_desc_t *desc,
                             ze_event_handle_t *out);
ze_result_t sim_event_destroy(ze_event_handle_t handle);
ze_result_t sim_event_host_signal(ze_event_handle_t handle);
ze_result_t sim_event_host_synchronize(ze_event_handle_t handle, uint64_t timeout);
ze_result_t sim_event_query_status(ze_event_handle_t handle);
ze_result_t sim_event_host_reset(ze_event_handle_t handle);
ze_result_t sim_event_query_kernel_timestamp(ze_event_handle_t handle,
                                             ze_kernel_timestamp_result_t *result);
ze_result_t sim_fence_create(ze_command_queue_handle_t queue, const ze_fence_desc_t *desc,
                             ze_fence_handle_t *out);
ze_result_t sim_fence_destroy(ze_fence_handle_t handle);
ze_result_t sim_fence_host_synchronize(ze_fence_handle_t handle, uint64_t timeout);
ze_result_t sim_fence_query_status(ze_fence_handle_t handle);
ze_result_t sim_fence_reset(ze_fence_handle_t handle);

/* sim_queue.c */
ze_result_t sim_queue_open(struct sim_context *context, struct sim_device *device,
                           const ze_command_queue_desc_t *desc, void *truth_handle,
                           struct sim_queue **out);
ze_result_t sim_queue_create(ze_context_handle_t context, ze_device_handle_t device,
                             const ze_command_queue_desc_t *desc, ze_command_queue_handle_t *out);
ze_result_t sim_queue_destroy(ze_command_queue_handle_t handle);
ze_result_t sim_queue_execute_command_lists(ze_command_queue_handle_t handle, uint32_t count,
                                            ze_command_list_handle_t *lists,
                                            ze_fence_handle_t fence);
ze_result_t sim_queue_synchronize(ze_command_queue_handle_t handle, uint64_t timeout);

/* sim_list.c */
ze_result_t sim_list_create(ze_context_handle_t context, ze_device_handle_t device,
                            const ze_command_list_desc_t *desc, ze_command_list_handle_t *out);
ze_result_t sim_list_create_immediate(ze_context_handle_t context, ze_device_handle_t device,
                                      const ze_command_queue_desc_t *desc,
                                      ze_command_list_handle_t *out);
ze_result_t sim_list_destroy(ze_command_list_handle_t handle);
ze_result_t sim_list_close(ze_command_list_handle_t handle);
ze_result_t sim_list_reset(ze_command_list_handle_t handle);
#if SIM_HEADERS_AT_LEAST(1, 9)
ze_result_t sim_list_immediate_append_command_lists(ze_command_list_handle_t handle, uint32_t count,
                                                    ze_command_list_handle_t *lists,
                                                    ze_event_handle_t signal, uint32_t wait_count,
                                                    ze_event_handle_t *waits);
#endif
ze_result_t sim_list_host_synchronize(ze_command_list_handle_t handle, uint64_t timeout);
ze_result_t sim_list_append_launch_kernel(ze_command_list_handle_t list, ze_kernel_handle_t kernel,
                                          const ze_group_count_t *groups, ze_event_handle_t signal,
                                          uint32_t wait_count, ze_event_handle_t *waits);
ze_result_t sim_list_append_launch_cooperative_kernel(ze_command_list_handle_t list,
                                                      ze_kernel_handle_t kernel,
                                                      const ze_group_count_t *groups,
                                                      ze_event_handle_t signal, uint32_t wait_count,
                                                      ze_event_handle_t *waits);
ze_result_t sim_list_append_launch_kernel_indirect(ze_command_list_handle_t list,
                                                   ze_kernel_handle_t kernel,
                                                   const ze_group_count_t *groups,
                                                   ze_event_handle_t signal, uint32_t wait_count,
                                                   ze_event_handle_t *waits);
ze_result_t sim_list_append_launch_multiple_kernels_indirect(
    ze_command_list_handle_t handle, uint32_t kernel_count, ze_kernel_handle_t *kernels,
    const uint32_t *count_buffer, const ze_group_count_t *arguments, ze_event_handle_t signal,
    uint32_t wait_count, ze_event_handle_t *waits);
ze_result_t sim_list_append_memory_copy(ze_command_list_handle_t list, void *dst, const void *src,
                                        size_t size, ze_event_handle_t signal, uint32_t wait_count,
                                        ze_event_handle_t *waits);
ze_result_t sim_list_append_memory_copy_from_context(ze_command_list_handle_t list, void *dst,
                                                     ze_context_handle_t src_context,
                                                     const void *src, size_t size,
                                                     ze_event_handle_t signal, uint32_t wait_count,
                                                     ze_event_handle_t *waits);
ze_result_t sim_list_append_memory_copy_region(ze_command_list_handle_t handle, void *dst,
                                               const ze_copy_region_t *dst_region,
                                               uint32_t dst_pitch, uint32_t dst_slice_pitch,
                                               const void *src, const ze_copy_region_t *src_region,
                                               uint32_t src_pitch, uint32_t src_slice_pitch,
                                               ze_event_handle_t signal, uint32_t wait_count,
                                               ze_event_handle_t *waits);
ze_result_t sim_list_append_memory_fill(ze_command_list_handle_t handle, void *ptr,
                                        const void *pattern, size_t pattern_size, size_t size,
                                        ze_event_handle_t signal, uint32_t wait_count,
                                        ze_event_handle_t *waits);
ze_result_t sim_list_append_memory_prefetch(ze_command_list_handle_t handle, const void *ptr,
                                            size_t size);
ze_result_t sim_list_append_mem_advise(ze_command_list_handle_t handle, ze_device_handle_t device,
                                       const void *ptr, size_t size, ze_memory_advice_t advice);
ze_result_t sim_list_append_barrier(ze_command_list_handle_t handle, ze_event_handle_t signal,
                                    uint32_t wait_count, ze_event_handle_t *waits);
ze_result_t sim_list_append_memory_ranges_barrier(ze_command_list_handle_t handle,
                                                  uint32_t range_count, const size_t *range_sizes,
                                                  const void **ranges, ze_event_handle_t signal,
                                                  uint32_t wait_count, ze_event_handle_t *waits);
ze_result_t sim_list_append_signal_event(ze_command_list_handle_t handle, ze_event_handle_t event);
ze_result_t sim_list_append_wait_on_events(ze_command_list_handle_t handle, uint32_t count,
                                           ze_event_handle_t *events);
ze_result_t sim_list_append_event_reset(ze_command_list_handle_t handle, ze_event_handle_t event);
ze_result_t sim_list_append_query_kernel_timestamps(ze_command_list_handle_t handle, uint32_t count,
                                                    ze_event_handle_t *events, void *dst,
                                                    const size_t *offsets, ze_event_handle_t signal,
                                                    uint32_t wait_count, ze_event_handle_t *waits);
ze_result_t sim_list_append_write_global_timestamp(ze_command_list_handle_t handle, uint64_t *dst,
                                                   ze_event_handle_t signal, uint32_t wait_count,
                                                   ze_event_handle_t *waits);

/* sim_semaphore.c */
#if SIM_HEADERS_AT_LEAST(1, 12)
ze_result_t sim_semaphore_import(ze_device_handle_t device,
                                 const ze_external_semaphore_ext_desc_t *desc,
                                 ze_external_semaphore_ext_handle_t *out);
ze_result_t sim_semaphore_release(ze_external_semaphore_ext_handle_t handle);
ze_result_t sim_list_append_signal_semaphores(ze_command_list_handle_t list, uint32_t count,
                                              ze_external_semaphore_ext_handle_t *semaphores,
                                              ze_external_semaphore_signal_params_ext_t *params,
                                              ze_event_handle_t signal, uint32_t wait_count,
                                              ze_event_handle_t *waits);
ze_result_t sim_list_append_wait_semaphores(ze_command_list_handle_t list, uint32_t count,
                                            ze_external_semaphore_ext_handle_t *semaphores,
                                            ze_external_semaphore_wait_params_ext_t *params,
                                            ze_event_handle_t signal, uint32_t wait_count,
                                            ze_event_handle_t *waits);
#endif

/* sim_sysman.c: reached through core device handles (ZES_ENABLE_SYSMAN=1) */
ze_result_t sim_sysman_enum_engine_groups(zes_device_handle_t device, uint32_t *count,
                                          zes_engine_handle_t *out);
ze_result_t sim_sysman_engine_get_properties(zes_engine_handle_t engine,
                                             zes_engine_properties_t *props);
ze_result_t sim_sysman_engine_get_activity(zes_engine_handle_t engine, zes_engine_stats_t *stats);
ze_result_t sim_sysman_enum_frequency_domains(zes_device_handle_t device, uint32_t *count,
                                              zes_freq_handle_t *out);
ze_result_t sim_sysman_frequency_get_properties(zes_freq_handle_t domain,
                                                zes_freq_properties_t *props);
ze_result_t sim_sysman_frequency_get_state(zes_freq_handle_t domain, zes_freq_state_t *state);
ze_result_t sim_sysman_enum_power_domains(zes_device_handle_t device, uint32_t *count,
                                          zes_pwr_handle_t *out);
ze_result_t sim_sysman_power_get_energy_counter(zes_pwr_handle_t domain,
                                                zes_power_energy_counter_t *energy);
ze_result_t sim_sysman_enum_memory_modules(zes_device_handle_t device, uint32_t *count,
                                           zes_mem_handle_t *out);
ze_result_t sim_sysman_memory_get_properties(zes_mem_handle_t module, zes_mem_properties_t *props);
ze_result_t sim_sysman_memory_get_state(zes_mem_handle_t module, zes_mem_state_t *state);

#endif
