/* placement: every host's role and offset on the common axis, from the solver (placement.h). */
#include "placement.h"

#include "utf8.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

int zm_placement_compute(struct zm_placement *placement, const char *const *hostnames,
                         uint32_t host_count, const struct zm_remote_index *frames,
                         uint64_t max_rate_ppm, char *reason, int reason_size)
{
    char why[256];
    *placement = (struct zm_placement){0};
    placement->count = host_count;
    placement->hosts = calloc(host_count ? host_count : 1, sizeof(*placement->hosts));
    placement->cursors = calloc(2 * (size_t)(host_count ? host_count : 1),
                                sizeof(*placement->cursors));
    if (!placement->hosts || !placement->cursors) {
        snprintf(reason, (size_t)reason_size, "Failed to place hosts: reason=out of memory");
        return -1;
    }
    placement->solver = zm_remote_solver_solve(frames, (int)host_count, hostnames, 0,
                                               (double)max_rate_ppm, why, sizeof(why));
    if (!placement->solver) {
        snprintf(reason, (size_t)reason_size, "Failed to place hosts: reason=%s", why);
        return -1;
    }
    for (uint32_t i = 0; i < host_count; i++) {
        struct zm_host_placement *host = &placement->hosts[i];
        const struct zm_remote_host *solved = zm_remote_solver_host(placement->solver, (int)i);
        host->hostname = hostnames[i];
        host->role = zm_remote_solver_role_name(solved->role);
        host->method = host_count == 1 ? "single" : solved->method;
        host->offset_ns = solved->offset_ns;
        host->bound_ns = solved->bound_ns;
        host->reference_ns = solved->reference_ns;
    }
    return 0;
}

void zm_placement_release(struct zm_placement *placement)
{
    zm_remote_solver_free(placement->solver);
    free(placement->hosts);
    free(placement->cursors);
    *placement = (struct zm_placement){0};
}

int64_t zm_placement_axis(void *context, uint32_t host, int64_t host_ns, int64_t *bound_ns)
{
    struct zm_placement *placement = context;
    int64_t axis_ns = host_ns, bound = 0;
    if (host < placement->count &&
        zm_remote_solver_place(placement->solver, (int)host, host_ns, &placement->cursors[2 * host],
                               &axis_ns, &bound) != 0) {
        axis_ns = host_ns;
        bound = 0;
    }
    if (bound_ns)
        *bound_ns = bound;
    return axis_ns;
}

int64_t zm_placement_bound(void *context, uint32_t host, int64_t axis_ns)
{
    struct zm_placement *placement = context;
    if (host >= placement->count || !zm_placement_placed(placement, host))
        return 0;
    /* The bound varies by parts per million of the time: the reference offset is close enough to
     * find the instant. */
    int64_t axis, bound = 0;
    int64_t host_ns = axis_ns - placement->hosts[host].offset_ns;
    if (zm_remote_solver_place(placement->solver, (int)host, host_ns,
                               &placement->cursors[2 * host + 1], &axis, &bound) != 0)
        return 0;
    return bound;
}

bool zm_placement_placed(void *context, uint32_t host)
{
    const struct zm_placement *placement = context;
    if (host >= placement->count)
        return false;
    return zm_remote_solver_host(placement->solver, (int)host)->role != ZM_REMOTE_ROLE_UNPLACED;
}

json_t *zm_placement_to_json(const struct zm_placement *placement)
{
    json_t *hosts = json_array();
    for (uint32_t i = 0; hosts && i < placement->count; i++) {
        const struct zm_host_placement *host = &placement->hosts[i];
        json_array_append_new(hosts,
                              json_pack("{s:o, s:s, s:I, s:I, s:s, s:I}", "hostname",
                                        zm_utf8_json_string(host->hostname), "role", host->role,
                                        "offset_ns", (json_int_t)host->offset_ns, "bound_ns",
                                        (json_int_t)host->bound_ns, "method", host->method,
                                        "reference_ns", (json_int_t)host->reference_ns));
    }
    return hosts;
}

/* One side of a window on the axis, into `object` as <side>_axis_start_ns / _bound_ns. */
static void axis_side(json_t *object, struct zm_placement *placement, const char *side,
                      const struct zm_remote_side *window_side)
{
    int64_t axis, bound;
    struct zm_remote_cursor cursor = {0, 0};
    if (zm_remote_solver_place(placement->solver, window_side->host, window_side->begin_ns, &cursor,
                               &axis, &bound) != 0)
        return;
    char key[64];
    snprintf(key, sizeof(key), "%s_axis_start_ns", side);
    json_object_set_new(object, key, json_integer((json_int_t)axis));
    snprintf(key, sizeof(key), "%s_axis_bound_ns", side);
    json_object_set_new(object, key, json_integer((json_int_t)bound));
}

json_t *zm_placement_windows_json(struct zm_placement *placement)
{
    json_t *windows = json_array();
    const struct zm_remote_solver *solver = placement->solver;
    for (size_t i = 0; windows && i < zm_remote_solver_window_count(solver); i++) {
        const struct zm_remote_window *w = zm_remote_solver_window(solver, i);
        char frame[96];
        snprintf(frame, sizeof(frame), "%" PRIu64 ":%" PRIu32 ":%" PRIu64, w->key.session,
                 w->key.worker, w->key.sequence);
        json_t *object = json_pack(
            "{s:s, s:o, s:I, s:I, s:I, s:o, s:I, s:I, s:I, s:I, s:I, s:s}", "frame", frame,
            "caller_host", zm_utf8_json_string(placement->hosts[w->caller.host].hostname),
            "caller_pid", (json_int_t)w->caller.pid, "caller_start_ns",
            (json_int_t)w->caller.begin_ns, "caller_duration_ns",
            (json_int_t)(w->caller.end_ns - w->caller.begin_ns), "peer_host",
            zm_utf8_json_string(placement->hosts[w->peer.host].hostname), "peer_pid",
            (json_int_t)w->peer.pid, "peer_start_ns", (json_int_t)w->peer.begin_ns,
            "peer_duration_ns", (json_int_t)(w->peer.end_ns - w->peer.begin_ns), "slack_ns",
            (json_int_t)w->slack_ns, "rate_bound_ns", (json_int_t)w->rate_bound_ns, "status",
            zm_remote_solver_window_status_name(w->status));
        if (!object)
            continue;
        if (w->status != ZM_REMOTE_WINDOW_DROPPED) {
            axis_side(object, placement, "caller", &w->caller);
            axis_side(object, placement, "peer", &w->peer);
        }
        json_array_append_new(windows, object);
    }
    return windows;
}

uint64_t zm_placement_dropped(const struct zm_placement *placement)
{
    return zm_remote_solver_dropped(placement->solver);
}

uint64_t zm_placement_incomplete(const struct zm_placement *placement)
{
    return zm_remote_solver_incomplete(placement->solver);
}
