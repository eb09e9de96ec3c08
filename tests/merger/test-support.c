/* Unit tests of the merger's containers: the hash map (inserts, overwrites, backward-shift
 * removal) and the external sorter (spilled runs, per-host axis offsets, stable ties); and of
 * its text safety: UTF-8 repair for JSON, one-line escaping of paths; of kernel name
 * demangling; and of the partial files' encoding (varints at their extremes, bounds). */
#include "check.h"
#include "demangle.h"
#include "intern.h"
#include "jsonout.h"
#include "map.h"
#include "partial_format.h"
#include "sorter.h"
#include "supervise.h"
#include "utf8.h"

#include <stdlib.h>
#include <string.h>

static void test_map_matches_a_reference(void)
{
    enum { KEYS = 5000 };
    static uint64_t reference[KEYS]; /* 0: absent, else value */
    struct zm_map map;
    zm_map_init(&map);
    uint64_t state = 12345;
    for (int step = 0; step < 200000; step++) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t key = (state >> 33) % KEYS;
        if ((state >> 20) % 3 == 0) {
            bool removed = zm_map_remove(&map, key >> 4, key);
            CHECK_EQ(removed, reference[key] != 0);
            reference[key] = 0;
        } else {
            uint64_t value = (state >> 40) | 1;
            CHECK_EQ(zm_map_put(&map, key >> 4, key, value), 0);
            reference[key] = value;
        }
    }
    size_t present = 0;
    for (uint64_t key = 0; key < KEYS; key++) {
        uint64_t *value = zm_map_find(&map, key >> 4, key);
        if (reference[key]) {
            present++;
            CHECK(value && *value == reference[key]);
        } else {
            CHECK(value == NULL);
        }
    }
    CHECK_EQ(map.count, present);
    zm_map_release(&map);
}

struct collected {
    int64_t last_axis;
    uint32_t records;
    bool ordered;
    uint32_t ties_in_order;
};

static int64_t offset_by_host(void *context, uint32_t host, int64_t key)
{
    (void)context;
    return key + (host == 1 ? 5 : 0); /* host 1 sits 5 ns later on the axis */
}

static int collect(void *context, int64_t axis, uint32_t host, const void *payload, uint32_t length)
{
    struct collected *c = context;
    (void)host;
    CHECK_EQ(length, sizeof(uint32_t));
    uint32_t sequence;
    memcpy(&sequence, payload, sizeof(sequence));
    if (axis < c->last_axis)
        c->ordered = false;
    c->last_axis = axis;
    c->records++;
    return 0;
}

static void test_sorter_spills_and_merges_in_axis_order(void)
{
    struct zm_sorter sorter;
    CHECK_EQ(zm_sorter_init(&sorter, 4096), 0); /* ~128 records per run: many runs */
    uint64_t state = 99;
    uint32_t sequence = 0;
    for (uint32_t host = 0; host < 2; host++) {
        for (int i = 0; i < 3000; i++) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            int64_t key = (int64_t)((state >> 33) % 100000);
            CHECK_EQ(zm_sorter_add(&sorter, key, host, &sequence, sizeof(sequence)), 0);
            sequence++;
        }
        CHECK_EQ(zm_sorter_flush(&sorter), 0);
    }
    CHECK(sorter.run_count > 10);
    struct collected c = {.last_axis = INT64_MIN, .ordered = true};
    CHECK_EQ(zm_sorter_merge(&sorter, offset_by_host, collect, &c), 0);
    CHECK_EQ(c.records, 6000);
    CHECK(c.ordered);
    zm_sorter_release(&sorter);
}

static uint32_t tie_order[4];
static uint32_t tie_count;

static int collect_ties(void *context, int64_t axis, uint32_t host, const void *payload,
                        uint32_t length)
{
    (void)context, (void)axis, (void)host, (void)length;
    memcpy(&tie_order[tie_count++], payload, sizeof(uint32_t));
    return 0;
}

static int64_t identity(void *context, uint32_t host, int64_t key)
{
    (void)context, (void)host;
    return key;
}

static void test_sorter_keeps_insertion_order_for_equal_keys(void)
{
    struct zm_sorter sorter;
    CHECK_EQ(zm_sorter_init(&sorter, 1 << 16), 0);
    for (uint32_t i = 0; i < 4; i++)
        CHECK_EQ(zm_sorter_add(&sorter, 42, 0, &i, sizeof(i)), 0);
    tie_count = 0;
    CHECK_EQ(zm_sorter_merge(&sorter, identity, collect_ties, NULL), 0);
    CHECK_EQ(tie_count, 4);
    for (uint32_t i = 0; i < tie_count; i++)
        CHECK_EQ(tie_order[i], i);
    zm_sorter_release(&sorter);
}

static uint32_t tie_next;
static bool ties_in_order;

static int check_tie_order(void *context, int64_t axis, uint32_t host, const void *payload,
                           uint32_t length)
{
    (void)context, (void)axis, (void)length;
    uint32_t sequence;
    memcpy(&sequence, payload, sizeof(sequence));
    /* The odd records (key 7) first, then the even ones (key 42), each in insertion order. */
    uint32_t expected = tie_next < 1000 ? 2 * tie_next + 1 : 2 * (tie_next - 1000);
    tie_next++;
    ties_in_order = ties_in_order && sequence == expected && host == sequence / 1000;
    return 0;
}

/* Equal keys across spilled runs, the segments kept in memory and two hosts: still the order of
 * insertion, and each record with its own host. */
static void test_sorter_keeps_insertion_order_across_runs_and_hosts(void)
{
    struct zm_sorter sorter;
    CHECK_EQ(zm_sorter_init(&sorter, 4096), 0);
    for (uint32_t sequence = 0; sequence < 2000; sequence++)
        CHECK_EQ(zm_sorter_add(&sorter, sequence % 2 ? 7 : 42, sequence / 1000, &sequence,
                               sizeof(sequence)),
                 0); /* no flush between the hosts: the change of host ends the segment */
    CHECK(sorter.run_count > 10);
    tie_next = 0;
    ties_in_order = true;
    CHECK_EQ(zm_sorter_merge(&sorter, identity, check_tie_order, NULL), 0);
    CHECK_EQ(tie_next, 2000);
    CHECK(ties_in_order);
    zm_sorter_release(&sorter);
}

/* Records that fit the budget are never written to a file, and still come out merged. */
static void test_sorter_does_not_spill_what_fits(void)
{
    struct zm_sorter sorter;
    CHECK_EQ(zm_sorter_init(&sorter, 1 << 20), 0);
    uint64_t state = 7;
    uint32_t sequence = 0;
    for (uint32_t host = 0; host < 2; host++) {
        for (int i = 0; i < 3000; i++, sequence++) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            int64_t key = (int64_t)((state >> 33) % 100000) - 50000; /* negative keys too */
            CHECK_EQ(zm_sorter_add(&sorter, key, host, &sequence, sizeof(sequence)), 0);
        }
        CHECK_EQ(zm_sorter_flush(&sorter), 0);
    }
    CHECK_EQ(sorter.run_count, 0);
    struct collected c = {.last_axis = INT64_MIN, .ordered = true};
    CHECK_EQ(zm_sorter_merge(&sorter, offset_by_host, collect, &c), 0);
    CHECK_EQ(c.records, 6000);
    CHECK(c.ordered);
    zm_sorter_release(&sorter);
}

static void test_utf8_replaces_invalid_sequences(void)
{
    CHECK_EQ(zm_utf8_sequence((const unsigned char *)"a"), 1);
    CHECK_EQ(zm_utf8_sequence((const unsigned char *)"\xc3\xa9"), 2);
    CHECK_EQ(zm_utf8_sequence((const unsigned char *)"\xe2\x82\xac"), 3);
    CHECK_EQ(zm_utf8_sequence((const unsigned char *)"\xf0\x9f\x98\x80"), 4);
    CHECK_EQ(zm_utf8_sequence((const unsigned char *)"\xff"), 0);
    CHECK_EQ(zm_utf8_sequence((const unsigned char *)"\xc0\x80"), 0);     /* overlong */
    CHECK_EQ(zm_utf8_sequence((const unsigned char *)"\xed\xa0\x80"), 0); /* surrogate */
    CHECK_EQ(zm_utf8_sequence((const unsigned char *)"\xc3"), 0);         /* cut short */
    json_t *string = zm_utf8_json_string("kernel\xff\xc3\xa9"
                                         "b");
    CHECK(string && strcmp(json_string_value(string), "kernel\xef\xbf\xbd\xc3\xa9"
                                                      "b") == 0);
    json_decref(string);
    string = zm_utf8_json_string("plain");
    CHECK(string && strcmp(json_string_value(string), "plain") == 0);
    json_decref(string);

    char *text = NULL;
    size_t size = 0;
    FILE *memory = open_memstream(&text, &size);
    struct zm_jsonout out;
    zm_jsonout_init(&out, memory);
    zm_jsonout_string(&out, "a\xff"
                            "b\"\n\xe2\x82\xac");
    CHECK_EQ(zm_jsonout_flush(&out), 0);
    fclose(memory);
    CHECK(text && strcmp(text, "\"a\xef\xbf\xbd"
                               "b\\\"\\u000a\xe2\x82\xac\"") == 0);
    zm_jsonout_release(&out);
    free(text);
}

static void test_escape_line_keeps_one_line(void)
{
    char out[64];
    zm_supervise_escape_line(out, sizeof(out),
                             "a\nb\tc\x01"
                             "d");
    CHECK(strcmp(out, "a\\nb\\tc\\x01d") == 0);
    zm_supervise_escape_line(out, 8, "0123456789");
    CHECK(strlen(out) < 8);
}

/* Mangled names become readable (SYCL's typeinfo names without "typeinfo name for "), anything
 * else stays; each distinct name is demangled once and equal readable texts are one pointer. */
static void test_demangle_kernel_names(void)
{
    static const char *const cases[][2] = {
        {"_ZTSZ4mainEUlvE_", "main::{lambda()#1}"},
        {"_Z3addPfS_", "add(float*, float*)"},
        {"_ZTS6Kernel", "Kernel"},
        {"zesim_spin", "zesim_spin"},
        {"i", "i"},                                     /* a type code, not a kernel name */
        {"_Zgarbage", "_Zgarbage"},                     /* fails to demangle */
        {"add(float*, float*)", "add(float*, float*)"}, /* already readable: same row */
    };
    enum { CASES = sizeof(cases) / sizeof(*cases) };
    struct zm_intern names;
    zm_intern_init(&names);
    struct zm_demangle demangle;
    zm_demangle_init(&demangle);
    const char *readable[CASES];
    for (int i = 0; i < CASES; i++) {
        const char *name = zm_intern(&names, cases[i][0]);
        CHECK(name != NULL);
        readable[i] = name ? zm_demangle_name(&demangle, name) : NULL;
        CHECK(readable[i] && strcmp(readable[i], cases[i][1]) == 0);
        CHECK(name && zm_demangle_name(&demangle, name) == readable[i]);
    }
    CHECK(readable[1] == readable[CASES - 1]);
    CHECK_EQ(demangle.cache.count, CASES);
    zm_demangle_release(&demangle);
    zm_intern_release(&names);
}

static void test_partial_encoding_round_trips_and_stays_in_bounds(void)
{
    static const int64_t signed_values[] = {0, 1, -1, 63, -64, 64, INT64_MAX, INT64_MIN};
    static const uint64_t unsigned_values[] = {0, 127, 128, UINT64_MAX};
    struct zm_partial_buffer buffer = {0};
    for (size_t i = 0; i < sizeof(signed_values) / sizeof(*signed_values); i++)
        zm_partial_put_i64(&buffer, signed_values[i]);
    for (size_t i = 0; i < sizeof(unsigned_values) / sizeof(*unsigned_values); i++)
        zm_partial_put_u64(&buffer, unsigned_values[i]);
    zm_partial_put_string(&buffer, "zeInit");
    zm_partial_put_fixed64(&buffer, 0x0102030405060708ull);
    CHECK(!buffer.failed);
    CHECK_EQ(buffer.bytes[0], 0); /* zigzag: 0, 1, -1 take one byte each */
    CHECK_EQ(buffer.bytes[1], 2);
    CHECK_EQ(buffer.bytes[2], 1);

    struct zm_partial_cursor in = {buffer.bytes, buffer.bytes + buffer.size, false};
    for (size_t i = 0; i < sizeof(signed_values) / sizeof(*signed_values); i++)
        CHECK(zm_partial_get_i64(&in) == signed_values[i]);
    for (size_t i = 0; i < sizeof(unsigned_values) / sizeof(*unsigned_values); i++)
        CHECK(zm_partial_get_u64(&in) == unsigned_values[i]);
    size_t length;
    const char *text = zm_partial_get_string(&in, &length);
    CHECK(text && length == 6 && memcmp(text, "zeInit", 6) == 0);
    CHECK(zm_partial_get_fixed64(&in) == 0x0102030405060708ull);
    CHECK(!in.failed && in.at == in.end);
    CHECK_EQ(zm_partial_get_u64(&in), 0); /* past the end: fails, and stays failed */
    CHECK(in.failed);

    /* a varint cut short, one of more than ten bytes, a string longer than what is left */
    static const unsigned char cut[] = {0x80, 0x80};
    static const unsigned char endless[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                            0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    static const unsigned char long_string[] = {5, 'a', 'b'};
    struct zm_partial_cursor c = {cut, cut + sizeof(cut), false};
    zm_partial_get_u64(&c);
    CHECK(c.failed);
    struct zm_partial_cursor e = {endless, endless + sizeof(endless), false};
    zm_partial_get_u64(&e);
    CHECK(e.failed);
    struct zm_partial_cursor s = {long_string, long_string + sizeof(long_string), false};
    CHECK(zm_partial_get_string(&s, &length) == NULL && s.failed);

    /* FNV-1a 64 of "a" (the published test vector) */
    CHECK(zm_partial_hash(ZM_PARTIAL_FNV_OFFSET, "a", 1) == 0xaf63dc4c8601ec8cull);
    zm_partial_buffer_release(&buffer);
}

int main(void)
{
    RUN(test_demangle_kernel_names);
    RUN(test_map_matches_a_reference);
    RUN(test_utf8_replaces_invalid_sequences);
    RUN(test_escape_line_keeps_one_line);
    RUN(test_sorter_spills_and_merges_in_axis_order);
    RUN(test_sorter_keeps_insertion_order_for_equal_keys);
    RUN(test_sorter_keeps_insertion_order_across_runs_and_hosts);
    RUN(test_sorter_does_not_spill_what_fits);
    RUN(test_partial_encoding_round_trips_and_stays_in_bounds);
    return check_status();
}
