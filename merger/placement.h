/*
 * placement: puts every host's trace time on one axis (INTERFACE.md metadata.hosts).
 *
 * For now the first host is the axis (offset 0, method "single") and every other host is
 * "unplaced": kept at offset 0 but reported as such and drawn under "[unplaced]" lane names.
 * This is the seam where frame-based placement (DESIGN.md "Remote dispatch") will plug in: it
 * only has to fill the entries; the timeline already asks this module for offsets per host.
 * Owns its entries.
 */
#ifndef ZM_PLACEMENT_H
#define ZM_PLACEMENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

struct zm_host_placement {
    const char *hostname; /* Weak */
    const char *role;     /* "axis", "placed", "observed" or "unplaced" (static) */
    const char *method;   /* static */
    int64_t offset_ns, bound_ns;
};

struct zm_placement {
    struct zm_host_placement *hosts; /* Owned by this */
    uint32_t count;
};

int zm_placement_compute(struct zm_placement *placement, const char *const *hostnames,
                         uint32_t host_count);
void zm_placement_release(struct zm_placement *placement);
int64_t zm_placement_offset(void *placement, uint32_t host);
bool zm_placement_placed(void *placement, uint32_t host);
/* metadata.hosts: a new JSON array. */
json_t *zm_placement_to_json(const struct zm_placement *placement);

#endif
