/* remote_polygon: clipping a convex polygon and climbing its boundary (remote_polygon.h). */
#include "remote_polygon.h"

#include "grow.h"

#include <stdlib.h>

struct vertex {
    double a, b;
};

struct zm_remote_polygon {
    struct vertex *vertices; /* Owned by this */
    size_t count, capacity;
    struct vertex *scratch; /* Owned by this: the next vertices while clipping */
    size_t scratch_capacity;
};

struct zm_remote_polygon *zm_remote_polygon_new(void)
{
    return calloc(1, sizeof(struct zm_remote_polygon));
}

void zm_remote_polygon_free(struct zm_remote_polygon *polygon)
{
    if (!polygon)
        return;
    free(polygon->vertices);
    free(polygon->scratch);
    free(polygon);
}

static int reserve(struct zm_remote_polygon *polygon, size_t count)
{
    if (ZM_GROW(polygon->vertices, polygon->capacity, count, 16) != 0 ||
        ZM_GROW(polygon->scratch, polygon->scratch_capacity, count, 16) != 0)
        return -1;
    return 0;
}

int zm_remote_polygon_box(struct zm_remote_polygon *polygon, double a_min, double a_max,
                          double b_min, double b_max)
{
    if (reserve(polygon, 8) != 0)
        return -1;
    polygon->vertices[0] = (struct vertex){a_min, b_min};
    polygon->vertices[1] = (struct vertex){a_max, b_min};
    polygon->vertices[2] = (struct vertex){a_max, b_max};
    polygon->vertices[3] = (struct vertex){a_min, b_max};
    polygon->count = 4;
    return 0;
}

int zm_remote_polygon_clip(struct zm_remote_polygon *polygon, double alpha, double beta,
                           double gamma)
{
    size_t n = polygon->count;
    if (n == 0)
        return 0;
    if (reserve(polygon, n + 1) != 0)
        return -1;
    const struct vertex *in = polygon->vertices;
    struct vertex *out = polygon->scratch;
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        struct vertex from = in[i], to = in[(i + 1) % n];
        double d_from = alpha * from.a + beta * from.b - gamma;
        double d_to = alpha * to.a + beta * to.b - gamma;
        if (d_from <= 0)
            out[kept++] = from;
        if ((d_from < 0 && d_to > 0) || (d_from > 0 && d_to < 0)) {
            double s = d_from / (d_from - d_to);
            out[kept++] =
                (struct vertex){from.a + s * (to.a - from.a), from.b + s * (to.b - from.b)};
        }
    }
    /* The clipped polygon becomes the polygon; the old arrays are the next scratch. */
    struct vertex *old = polygon->vertices;
    size_t old_capacity = polygon->capacity;
    polygon->vertices = polygon->scratch;
    polygon->capacity = polygon->scratch_capacity;
    polygon->scratch = old;
    polygon->scratch_capacity = old_capacity;
    polygon->count = kept;
    return 0;
}

bool zm_remote_polygon_empty(const struct zm_remote_polygon *polygon)
{
    return polygon->count == 0;
}

static bool same_vertex(struct vertex p, struct vertex q)
{
    return p.a == q.a && p.b == q.b;
}

void zm_remote_polygon_dedupe(struct zm_remote_polygon *polygon)
{
    struct vertex *v = polygon->vertices;
    size_t kept = 0;
    for (size_t i = 0; i < polygon->count; i++) {
        if (kept > 0 && same_vertex(v[i], v[kept - 1]))
            continue;
        v[kept++] = v[i];
    }
    while (kept > 1 && same_vertex(v[0], v[kept - 1]))
        kept--;
    polygon->count = kept;
}

double zm_remote_polygon_extreme(const struct zm_remote_polygon *polygon, double x, double sign,
                                 size_t *start)
{
    /* A linear function is unimodal along a convex boundary: climb while a neighbour is higher. */
    const struct vertex *v = polygon->vertices;
    size_t n = polygon->count;
    size_t i = *start < n ? *start : 0;
    double best = sign * (v[i].a + v[i].b * x);
    for (size_t steps = 0; steps < n; steps++) {
        size_t next = (i + 1) % n, prev = (i + n - 1) % n;
        double value_next = sign * (v[next].a + v[next].b * x);
        double value_prev = sign * (v[prev].a + v[prev].b * x);
        if (value_next > best && value_next >= value_prev) {
            i = next;
            best = value_next;
        } else if (value_prev > best) {
            i = prev;
            best = value_prev;
        } else {
            break;
        }
    }
    *start = i;
    return sign * best;
}

size_t zm_remote_polygon_vertex_count(const struct zm_remote_polygon *polygon)
{
    return polygon->count;
}

void zm_remote_polygon_vertex(const struct zm_remote_polygon *polygon, size_t vertex, double *a,
                              double *b)
{
    *a = polygon->vertices[vertex].a;
    *b = polygon->vertices[vertex].b;
}
