/* stats: per-name rows of counts and durations (stats.h). */
#include "stats.h"

#include "grow.h"
#include "supervise.h"

#include <stdlib.h>
#include <string.h>

static void table_init(struct zm_stat_table *table)
{
    table->rows = NULL;
    table->count = table->capacity = 0;
    zm_map_init(&table->index);
}

static void table_release(struct zm_stat_table *table)
{
    free(table->rows);
    zm_map_release(&table->index);
    table_init(table);
}

void zm_stats_init(struct zm_stats *stats, bool extended)
{
    stats->extended = extended;
    table_init(&stats->api);
    table_init(&stats->device);
}

void zm_stats_release(struct zm_stats *stats)
{
    table_release(&stats->api);
    table_release(&stats->device);
}

bool zm_stats_result_is_error(uint32_t result)
{
    return result >= 0x70000000u;
}

static struct zm_stat_row *row_for(struct zm_stat_table *table, const char *name, uint64_t where)
{
    uint64_t *index = zm_map_find(&table->index, (uint64_t)(uintptr_t)name, where);
    if (index)
        return &table->rows[*index];
    if (ZM_GROW(table->rows, table->capacity, table->count + 1, 64) != 0)
        return NULL;
    if (zm_map_put(&table->index, (uint64_t)(uintptr_t)name, where, table->count) != 0)
        return NULL;
    struct zm_stat_row *row = &table->rows[table->count++];
    *row = (struct zm_stat_row){.name = name, .min_ns = INT64_MAX, .max_ns = INT64_MIN};
    return row;
}

static void add(struct zm_stat_row *row, int64_t duration_ns)
{
    zm_supervise_progress(); /* every span counted: the supervisor sees long phases move */
    row->calls++;
    row->total_ns += duration_ns;
    if (duration_ns < row->min_ns)
        row->min_ns = duration_ns;
    if (duration_ns > row->max_ns)
        row->max_ns = duration_ns;
}

static struct zm_stat_row *api_row(struct zm_stats *stats, const char *function, uint32_t host,
                                   int64_t pid, int64_t tid)
{
    uint64_t where = 0;
    if (stats->extended) /* pid and tid fit 24 bits on Linux (pid_max <= 2^22) */
        where =
            (uint64_t)host << 48 | ((uint64_t)pid & 0xffffff) << 24 | ((uint64_t)tid & 0xffffff);
    struct zm_stat_row *row = row_for(&stats->api, function, where);
    if (row && stats->extended) {
        row->host = host;
        row->pid = pid;
        row->tid = tid;
    }
    return row;
}

static struct zm_stat_row *device_row(struct zm_stats *stats, const char *name, uint32_t host,
                                      uint32_t device_label)
{
    uint64_t where = stats->extended ? ((uint64_t)host << 32 | device_label) + 1 : 0;
    struct zm_stat_row *row = row_for(&stats->device, name, where);
    if (row && stats->extended) {
        row->host = host;
        row->device = device_label;
    }
    return row;
}

/* Sums already made (a partial's): the same row as their spans would have reached. */
static void merge(struct zm_stat_row *row, uint64_t calls, int64_t total_ns, int64_t min_ns,
                  int64_t max_ns)
{
    zm_supervise_progress();
    row->calls += calls;
    /* unsigned: a corrupt partial's total must not be undefined behaviour */
    row->total_ns = (int64_t)((uint64_t)row->total_ns + (uint64_t)total_ns);
    if (min_ns < row->min_ns)
        row->min_ns = min_ns;
    if (max_ns > row->max_ns)
        row->max_ns = max_ns;
}

int zm_stats_add_api(struct zm_stats *stats, const struct zm_api_span *span)
{
    struct zm_stat_row *row = api_row(stats, span->function, span->host, span->pid, span->tid);
    if (!row)
        return -1;
    add(row, span->end_ns - span->start_ns);
    if (zm_stats_result_is_error(span->result))
        row->errors++;
    return 0;
}

int zm_stats_add_device(struct zm_stats *stats, const struct zm_device_span *span)
{
    struct zm_stat_row *row = device_row(stats, span->name, span->host, span->device_label);
    if (!row)
        return -1;
    add(row, span->duration_ns);
    return 0;
}

int zm_stats_add_api_totals(struct zm_stats *stats, const struct zm_api_totals *totals)
{
    struct zm_stat_row *row =
        api_row(stats, totals->function, totals->host, totals->pid, totals->tid);
    if (!row)
        return -1;
    merge(row, totals->calls, totals->total_ns, totals->min_ns, totals->max_ns);
    row->errors += totals->errors;
    return 0;
}

int zm_stats_add_device_totals(struct zm_stats *stats, const struct zm_device_totals *totals)
{
    struct zm_stat_row *row = device_row(stats, totals->name, totals->host, totals->device_label);
    if (!row)
        return -1;
    merge(row, totals->calls, totals->total_ns, totals->min_ns, totals->max_ns);
    return 0;
}

static int compare_rows(const void *left, const void *right)
{
    const struct zm_stat_row *a = left, *b = right;
    if (a->total_ns != b->total_ns)
        return a->total_ns > b->total_ns ? -1 : 1;
    int by_name = strcmp(a->name, b->name);
    if (by_name)
        return by_name;
    if (a->host != b->host)
        return a->host < b->host ? -1 : 1;
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    if (a->tid != b->tid)
        return a->tid < b->tid ? -1 : 1;
    return a->device < b->device ? -1 : a->device > b->device;
}

void zm_stats_sort(struct zm_stat_table *table)
{
    if (table->count > 1)
        qsort(table->rows, table->count, sizeof(*table->rows), compare_rows);
    zm_map_release(&table->index);
}

int64_t zm_stats_total(const struct zm_stat_table *table)
{
    int64_t total = 0;
    for (size_t i = 0; i < table->count; i++)
        total += table->rows[i].total_ns;
    return total;
}
