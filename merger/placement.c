#include "placement.h"

#include <stdlib.h>

int zm_placement_compute(struct zm_placement *placement, const char *const *hostnames,
                         uint32_t host_count)
{
    placement->count = host_count;
    placement->hosts = calloc(host_count ? host_count : 1, sizeof(*placement->hosts));
    if (!placement->hosts)
        return -1;
    for (uint32_t i = 0; i < host_count; i++) {
        struct zm_host_placement *host = &placement->hosts[i];
        host->hostname = hostnames[i];
        if (i == 0) {
            host->role = "axis";
            host->method = host_count == 1 ? "single" : "root";
        } else {
            /* No frames are read yet: nothing ties this host's clock to the axis. */
            host->role = "unplaced";
            host->method = "none";
        }
    }
    return 0;
}

void zm_placement_release(struct zm_placement *placement)
{
    free(placement->hosts);
    placement->hosts = NULL;
    placement->count = 0;
}

int64_t zm_placement_offset(void *context, uint32_t host)
{
    const struct zm_placement *placement = context;
    return host < placement->count ? placement->hosts[host].offset_ns : 0;
}

bool zm_placement_placed(void *context, uint32_t host)
{
    const struct zm_placement *placement = context;
    if (host >= placement->count)
        return false;
    const char *role = placement->hosts[host].role;
    return role[0] != 'u'; /* everything but "unplaced" */
}

json_t *zm_placement_to_json(const struct zm_placement *placement)
{
    json_t *hosts = json_array();
    for (uint32_t i = 0; hosts && i < placement->count; i++) {
        const struct zm_host_placement *host = &placement->hosts[i];
        json_array_append_new(hosts, json_pack("{s:s, s:s, s:I, s:I, s:s}", "hostname",
                                               host->hostname, "role", host->role, "offset_ns",
                                               (json_int_t)host->offset_ns, "bound_ns",
                                               (json_int_t)host->bound_ns, "method", host->method));
    }
    return hosts;
}
