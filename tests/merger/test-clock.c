/* Unit tests of clock conversion: anchors from samples, wrap-around, interpolation,
 * extrapolation and uncertainty. No babeltrace, no LTTng. */
#include "check.h"
#include "clock.h"

#include <stdlib.h>

/* 10 MHz: 100 ns per tick. */
#define HZ 10000000u

static void test_tightest_sample_wins(void)
{
    struct zm_clock clock;
    zm_clock_init(&clock, HZ, 32);
    zm_clock_sample_begin(&clock, 1, 0, 1000);
    CHECK_EQ(zm_clock_sample_end(&clock, 1, 0, 500, 0, 1400), 0); /* width 400 */
    zm_clock_sample_begin(&clock, 1, 1, 2000);
    CHECK_EQ(zm_clock_sample_end(&clock, 1, 1, 510, 0, 2100), 0); /* width 100: the tightest */
    zm_clock_sample_begin(&clock, 1, 2, 3000);
    CHECK_EQ(zm_clock_sample_end(&clock, 1, 2, 520, 0, 3300), 0);
    CHECK_EQ(clock.count, 1);
    CHECK_EQ(clock.anchors[0].ns, 2050);
    CHECK_EQ(clock.anchors[0].ticks, 510);
    CHECK_EQ(clock.anchors[0].uncertainty_ns, 50 + 100); /* half width + one tick */
    zm_clock_release(&clock);
}

static void test_failed_or_unpaired_samples_are_ignored(void)
{
    struct zm_clock clock;
    zm_clock_init(&clock, HZ, 32);
    CHECK_EQ(zm_clock_sample_end(&clock, 1, 0, 500, 0, 1400), 0); /* no begin */
    zm_clock_sample_begin(&clock, 1, 0, 1000);
    CHECK_EQ(zm_clock_sample_end(&clock, 1, 0, 500, 0x70000001u, 1400), 0); /* failed reading */
    zm_clock_sample_begin(&clock, 2, 0, 1000);
    CHECK_EQ(zm_clock_sample_end(&clock, 2, 1, 500, 0, 1400), 0); /* another sample's end */
    CHECK_EQ(clock.count, 0);
    zm_clock_release(&clock);
}

static void test_unwrap_takes_candidate_after_reference(void)
{
    struct zm_clock clock;
    zm_clock_init(&clock, HZ, 32);
    /* Anchor just below 2^32 ticks at host 1 ms. */
    CHECK_EQ(zm_clock_add_anchor(&clock, &(struct zm_anchor){1, 1000000, 0xfffff000ull, 50}), 0);
    /* 0x1000 ticks (409.6 us) after the anchor the counter has wrapped to 0. */
    uint64_t full = zm_clock_unwrap(&clock, 0x10, 1000000 + 409600);
    CHECK_EQ(full, 0x100000010ull);
    /* Before the wrap, the same high bits as the anchor. */
    CHECK_EQ(zm_clock_unwrap(&clock, 0xfffff100u, 1000000), 0xfffff100ull);
    /* A second wrap period later, the high bits follow. */
    int64_t later = 1000000 + (int64_t)(0x100000000ull * 100) + 409600;
    CHECK_EQ(zm_clock_unwrap(&clock, 0x10, later), 0x200000010ull);
    zm_clock_release(&clock);
}

static void test_interpolation_between_anchors(void)
{
    struct zm_clock clock;
    zm_clock_init(&clock, HZ, 64);
    /* The device runs 0.1% fast relative to nominal: 10010 ticks per ms. */
    CHECK_EQ(zm_clock_add_anchor(&clock, &(struct zm_anchor){1, 1000000, 100000, 40}), 0);
    CHECK_EQ(zm_clock_add_anchor(&clock, &(struct zm_anchor){2, 2000000, 110010, 80}), 0);
    int64_t uncertainty;
    /* Halfway in device ticks is halfway in host time. */
    CHECK_EQ(zm_clock_to_ns(&clock, 105005, 100, &uncertainty), 1500000);
    CHECK_EQ(uncertainty, 60); /* interpolated between 40 and 80 */
    CHECK_EQ(zm_clock_to_ns(&clock, 100000, 100, &uncertainty), 1000000);
    CHECK_EQ(uncertainty, 40);
    zm_clock_release(&clock);
}

static void test_extrapolation_widens_uncertainty(void)
{
    struct zm_clock clock;
    zm_clock_init(&clock, HZ, 64);
    CHECK_EQ(zm_clock_add_anchor(&clock, &(struct zm_anchor){1, 1000000, 100000, 40}), 0);
    int64_t uncertainty;
    /* 10000 ticks = 1 ms after the only anchor, nominal rate, 100 ppm of 1 ms = 100 ns. */
    CHECK_EQ(zm_clock_to_ns(&clock, 110000, 100, &uncertainty), 2000000);
    CHECK_EQ(uncertainty, 140);
    /* Before the anchor too. */
    CHECK_EQ(zm_clock_to_ns(&clock, 90000, 100, &uncertainty), 0);
    CHECK_EQ(uncertainty, 140);
    zm_clock_release(&clock);
}

static void test_convert_across_wrap(void)
{
    struct zm_clock clock;
    zm_clock_init(&clock, HZ, 32);
    CHECK_EQ(zm_clock_add_anchor(&clock, &(struct zm_anchor){1, 1000000, 0xffffff00ull, 50}), 0);
    CHECK_EQ(zm_clock_add_anchor(&clock, &(struct zm_anchor){2, 1100000, 0xffffff00ull + 1000, 50}),
             0);
    struct zm_conversion conversion;
    /* Starts 0x80 ticks before the wrap, ends 0x80 after: 256 ticks = 25.6 us. */
    zm_clock_convert(&clock, 0xffffff80u, 0x80u, 1000000, 100, &conversion);
    CHECK(conversion.anchored);
    CHECK(!conversion.inverted);
    CHECK_EQ(conversion.start_ns, 1000000 + 0x80 * 100);
    CHECK_EQ(conversion.duration_ns, 25600);
    CHECK_EQ(conversion.uncertainty_ns, 50);
    zm_clock_release(&clock);
}

static void test_inverted_interval_clamps(void)
{
    struct zm_clock clock;
    zm_clock_init(&clock, HZ, 32);
    CHECK_EQ(zm_clock_add_anchor(&clock, &(struct zm_anchor){1, 1000000, 5000, 50}), 0);
    struct zm_conversion conversion;
    zm_clock_convert(&clock, 6000, 5990, 1000000, 100, &conversion);
    CHECK(conversion.inverted);
    CHECK_EQ(conversion.duration_ns, 0);
    CHECK_EQ(conversion.end_ns, conversion.start_ns);
    CHECK_EQ(conversion.start_ns, 1100000);
    zm_clock_release(&clock);
}

static void test_unanchored_keeps_duration(void)
{
    struct zm_clock clock;
    zm_clock_init(&clock, HZ, 32);
    struct zm_conversion conversion;
    zm_clock_convert(&clock, 0xfffffff0u, 0x10u, 0, 100, &conversion);
    CHECK(!conversion.anchored);
    CHECK_EQ(conversion.duration_ns, 32 * 100);
    zm_clock_release(&clock);
}

static void test_late_read_unwraps_from_the_read(void)
{
    struct zm_clock clock;
    zm_clock_init(&clock, HZ, 16); /* wraps every 6.5536 ms */
    CHECK_EQ(zm_clock_add_anchor(&clock, &(struct zm_anchor){1, 1000000, 10000, 50}), 0);
    /* Read soon after the entry: the entry is the reference. */
    CHECK_EQ(zm_clock_reference(&clock, 1100000, 1200000), 1100000);
    /* Read 20 ms (three periods) later: one period (less a margin) before the read. */
    int64_t reference = zm_clock_reference(&clock, 1100000, 21100000);
    CHECK(reference > 21100000 - 6553600 && reference < 21100000 - 6553600 + 1100000);
    /* Work that started at 20.6 ms, 0.5 ms before that read: tick 10000 + 196000. */
    uint64_t truth = 206000;
    struct zm_conversion conversion;
    zm_clock_convert(&clock, truth & 0xffff, (truth + 100) & 0xffff, reference, 100, &conversion);
    CHECK_EQ(conversion.start_ns, 20600000);
    CHECK_EQ(conversion.duration_ns, 10000);
    /* From the entry, the same low bits would have landed two periods early. */
    CHECK_EQ(zm_clock_unwrap(&clock, truth & 0xffff, 1100000), truth - 2 * 65536);
    /* No append seen: the read alone decides. */
    CHECK_EQ(zm_clock_reference(&clock, INT64_MIN, 21100000), reference);
    zm_clock_release(&clock);
}

int main(void)
{
    RUN(test_tightest_sample_wins);
    RUN(test_failed_or_unpaired_samples_are_ignored);
    RUN(test_unwrap_takes_candidate_after_reference);
    RUN(test_interpolation_between_anchors);
    RUN(test_extrapolation_widens_uncertainty);
    RUN(test_convert_across_wrap);
    RUN(test_inverted_interval_clamps);
    RUN(test_unanchored_keeps_duration);
    RUN(test_late_read_unwraps_from_the_read);
    return check_status();
}
