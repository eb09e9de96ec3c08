/*
 * clock: one device's clock as seen from its host (docs/design.md "Clocks").
 *
 * Collects the anchors of one device (per host and process): each anchor is the tightest of its
 * samples, a sample being a clock_sample_begin/clock_sample_end pair of tracepoints whose
 * timestamps bracket the device's reading. Converts raw kernel timestamps (ticks truncated to
 * kernel_timestamp_valid_bits) to host trace nanoseconds:
 *   - the missing high bits are rebuilt from the anchor nearest to a reference host time, taking
 *     the first candidate after it (the append's entry: a command cannot start before it is
 *     appended; or, for work read more than a wrap period later, one period before the read);
 *   - between two anchors the mapping interpolates (so drift between device and host cancels);
 *     outside them it extrapolates at the nominal rate;
 *   - every result carries its uncertainty: the anchors' (interpolated), plus, when extrapolating,
 *     the distance times the assumed rate bound.
 * The clock owns its anchor array.
 */
#ifndef ZM_CLOCK_H
#define ZM_CLOCK_H

#include "must_check.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct zm_anchor {
    uint64_t id;
    int64_t ns;             /* host time of the reading: middle of the tightest sample */
    uint64_t ticks;         /* device reading */
    int64_t uncertainty_ns; /* half the sample's width plus one tick */
};

struct zm_clock {
    uint64_t timer_hz;
    unsigned kernel_bits;      /* 1..64 */
    struct zm_anchor *anchors; /* Owned by this; in host time order */
    size_t count, capacity;
    /* The sample whose begin was seen and whose end is awaited. */
    bool pending;
    uint64_t pending_anchor;
    uint32_t pending_sample;
    int64_t pending_begin_ns;
};

struct zm_conversion {
    int64_t start_ns, end_ns; /* host trace time; only when anchored */
    int64_t duration_ns;      /* end - start, or from ticks at the nominal rate when unanchored */
    int64_t uncertainty_ns;
    bool anchored; /* false: no anchor, start/end unknown */
    bool inverted; /* end was before start: clamped to a zero duration */
};

void zm_clock_init(struct zm_clock *clock, uint64_t timer_hz, unsigned kernel_bits);
void zm_clock_release(struct zm_clock *clock);
void zm_clock_sample_begin(struct zm_clock *clock, uint64_t anchor, uint32_t sample, int64_t ns);
/* A failed reading (result != 0) or an end without its begin is ignored. -1: out of memory. */
ZM_MUST_CHECK int zm_clock_sample_end(struct zm_clock *clock, uint64_t anchor, uint32_t sample,
                                      uint64_t ticks, uint32_t result, int64_t ns);
/* Adds a ready-made anchor (tests; also what sample_end does); kept in host time order. */
ZM_MUST_CHECK int zm_clock_add_anchor(struct zm_clock *clock, const struct zm_anchor *anchor);

/* The time after which an interval's start is looked for: the append's entry (a command cannot
 * start before it is appended), unless its timing was read more than one wrap period after that
 * entry (a regular list executed again much later): then one period before the read, since the
 * work was done when its timing was read. entry_ns may be INT64_MIN (append not seen). */
int64_t zm_clock_reference(const struct zm_clock *clock, int64_t entry_ns, int64_t read_ns);
/* Rebuilds the full tick count of a truncated timestamp: the first value with these low bits at
 * or after `after_ns` (minus the anchor's uncertainty). Requires at least one anchor. */
uint64_t zm_clock_unwrap(const struct zm_clock *clock, uint64_t raw, int64_t after_ns);
/* Full ticks to host ns and that point's uncertainty. Requires at least one anchor. */
int64_t zm_clock_to_ns(const struct zm_clock *clock, uint64_t ticks, uint64_t rate_ppm,
                       int64_t *uncertainty_ns);
/* Converts one device interval given as raw (truncated) start and end ticks. */
void zm_clock_convert(const struct zm_clock *clock, uint64_t raw_start, uint64_t raw_end,
                      int64_t after_ns, uint64_t rate_ppm, struct zm_conversion *out);

#endif
