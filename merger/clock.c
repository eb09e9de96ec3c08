/* clock: a device's anchors and the ticks-to-host-ns conversion (clock.h). */
#include "clock.h"

#include "grow.h"

#include <math.h>
#include <stdlib.h>

void zm_clock_init(struct zm_clock *clock, uint64_t timer_hz, unsigned kernel_bits)
{
    *clock =
        (struct zm_clock){.timer_hz = timer_hz ? timer_hz : 1,
                          .kernel_bits = kernel_bits == 0 || kernel_bits > 64 ? 64 : kernel_bits};
}

void zm_clock_release(struct zm_clock *clock)
{
    free(clock->anchors);
    clock->anchors = NULL;
    clock->count = clock->capacity = 0;
}

void zm_clock_sample_begin(struct zm_clock *clock, uint64_t anchor, uint32_t sample, int64_t ns)
{
    clock->pending = true;
    clock->pending_anchor = anchor;
    clock->pending_sample = sample;
    clock->pending_begin_ns = ns;
}

static int64_t tick_ns(const struct zm_clock *clock)
{
    /* One tick, rounded up: the reading itself is only known to that resolution. */
    return (int64_t)((1000000000ull + clock->timer_hz - 1) / clock->timer_hz);
}

int zm_clock_add_anchor(struct zm_clock *clock, const struct zm_anchor *anchor)
{
    if (ZM_GROW(clock->anchors, clock->capacity, clock->count + 1, 8) != 0)
        return -1;
    /* Anchors arrive in time order; insertion keeps the order if one does not. */
    size_t i = clock->count;
    while (i > 0 && clock->anchors[i - 1].ns > anchor->ns) {
        clock->anchors[i] = clock->anchors[i - 1];
        i--;
    }
    clock->anchors[i] = *anchor;
    clock->count++;
    return 0;
}

int zm_clock_sample_end(struct zm_clock *clock, uint64_t anchor, uint32_t sample, uint64_t ticks,
                        uint32_t result, int64_t ns)
{
    if (!clock->pending || clock->pending_anchor != anchor || clock->pending_sample != sample)
        return 0;
    clock->pending = false;
    if (result != 0 || ns < clock->pending_begin_ns)
        return 0;
    int64_t width = ns - clock->pending_begin_ns;
    struct zm_anchor candidate = {
        .id = anchor,
        .ns = clock->pending_begin_ns + width / 2,
        .ticks = ticks,
        .uncertainty_ns = (width + 1) / 2 + tick_ns(clock),
    };
    /* Samples of one anchor are consecutive: keep the tightest. */
    if (clock->count > 0 && clock->anchors[clock->count - 1].id == anchor) {
        struct zm_anchor *last = &clock->anchors[clock->count - 1];
        if (candidate.uncertainty_ns < last->uncertainty_ns)
            *last = candidate;
        return 0;
    }
    return zm_clock_add_anchor(clock, &candidate);
}

/* The anchor whose host time is nearest to ns. */
static const struct zm_anchor *nearest_by_ns(const struct zm_clock *clock, int64_t ns)
{
    size_t lo = 0, hi = clock->count; /* first anchor with anchors[i].ns > ns */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (clock->anchors[mid].ns <= ns)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return &clock->anchors[0];
    if (lo == clock->count)
        return &clock->anchors[clock->count - 1];
    const struct zm_anchor *before = &clock->anchors[lo - 1], *after = &clock->anchors[lo];
    return ns - before->ns <= after->ns - ns ? before : after;
}

static double ticks_per_ns(const struct zm_clock *clock)
{
    return (double)clock->timer_hz / 1e9;
}

int64_t zm_clock_reference(const struct zm_clock *clock, int64_t entry_ns, int64_t read_ns)
{
    if (clock->kernel_bits >= 63)
        return entry_ns == INT64_MIN ? read_ns : entry_ns;
    double period_ns = (double)(1ull << clock->kernel_bits) / ticks_per_ns(clock);
    /* Conversion errors may put a start slightly after its read: leave a margin of a thousandth
     * of the period plus a millisecond. */
    double margin_ns = period_ns / 1000 + 1e6;
    double earliest = (double)read_ns - period_ns + margin_ns;
    if (earliest < -9e18)
        earliest = -9e18;
    return (double)entry_ns >= earliest ? entry_ns : (int64_t)earliest;
}

uint64_t zm_clock_unwrap(const struct zm_clock *clock, uint64_t raw, int64_t after_ns)
{
    if (clock->kernel_bits >= 64)
        return raw;
    uint64_t period = 1ull << clock->kernel_bits;
    uint64_t mask = period - 1;
    const struct zm_anchor *anchor = nearest_by_ns(clock, after_ns);
    /* Device ticks at after_ns, less a margin for the anchor's own uncertainty. */
    double delta = (double)(after_ns - anchor->ns - anchor->uncertainty_ns) * ticks_per_ns(clock);
    int64_t shift = (int64_t)floor(delta) - 1;
    uint64_t floor_ticks =
        shift < 0 && (uint64_t)(-shift) > anchor->ticks ? 0 : anchor->ticks + (uint64_t)shift;
    uint64_t candidate = (floor_ticks & ~mask) | (raw & mask);
    if (candidate < floor_ticks)
        candidate += period;
    return candidate;
}

int64_t zm_clock_to_ns(const struct zm_clock *clock, uint64_t ticks, uint64_t rate_ppm,
                       int64_t *uncertainty_ns)
{
    /* i = last anchor at or before `ticks` in device time (anchors are monotonic in both). */
    size_t lo = 0, hi = clock->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (clock->anchors[mid].ticks <= ticks)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo > 0 && lo < clock->count) {
        const struct zm_anchor *a = &clock->anchors[lo - 1], *b = &clock->anchors[lo];
        double span_ticks = (double)(b->ticks - a->ticks);
        double span_ns = (double)(b->ns - a->ns);
        double measured = span_ns > 0 ? span_ticks / span_ns : 0;
        /* Trust the measured rate only when it is near the nominal one (broken anchors aside). */
        if (measured > 0 && fabs(measured / ticks_per_ns(clock) - 1.0) < 0.01) {
            double f = (double)(ticks - a->ticks) / span_ticks;
            *uncertainty_ns = (int64_t)llround((double)a->uncertainty_ns * (1 - f) +
                                               (double)b->uncertainty_ns * f);
            return a->ns + (int64_t)llround(f * span_ns);
        }
    }
    const struct zm_anchor *a = lo == 0 ? &clock->anchors[0] : &clock->anchors[lo - 1];
    if (lo < clock->count && lo > 0 && ticks - a->ticks > clock->anchors[lo].ticks - ticks)
        a = &clock->anchors[lo];
    double delta_ticks =
        ticks >= a->ticks ? (double)(ticks - a->ticks) : -(double)(a->ticks - ticks);
    double delta_ns = delta_ticks / ticks_per_ns(clock);
    *uncertainty_ns = a->uncertainty_ns + (int64_t)ceil(fabs(delta_ns) * (double)rate_ppm / 1e6);
    return a->ns + (int64_t)llround(delta_ns);
}

void zm_clock_convert(const struct zm_clock *clock, uint64_t raw_start, uint64_t raw_end,
                      int64_t after_ns, uint64_t rate_ppm, struct zm_conversion *out)
{
    *out = (struct zm_conversion){0};
    uint64_t period_mask = clock->kernel_bits >= 64 ? UINT64_MAX : (1ull << clock->kernel_bits) - 1;
    /* The end is rebuilt relative to the start: the first candidate at or after it. A difference
     * of more than half the wrap period means the end really was before the start. */
    uint64_t ticks = (raw_end - raw_start) & period_mask;
    if (ticks > period_mask / 2) {
        out->inverted = true;
        ticks = 0;
    }
    if (clock->count == 0) {
        out->duration_ns = (int64_t)llround((double)ticks / ticks_per_ns(clock));
        return;
    }
    uint64_t start = zm_clock_unwrap(clock, raw_start, after_ns);
    int64_t u_start, u_end;
    out->anchored = true;
    out->start_ns = zm_clock_to_ns(clock, start, rate_ppm, &u_start);
    out->end_ns = zm_clock_to_ns(clock, start + ticks, rate_ppm, &u_end);
    if (out->end_ns < out->start_ns)
        out->end_ns = out->start_ns;
    out->duration_ns = out->end_ns - out->start_ns;
    out->uncertainty_ns = u_start > u_end ? u_start : u_end;
}
