/*
 * remote_polygon: a convex polygon in the plane of (a, b), the feasible region of a clock offset
 * theta(x) = a + b*x (remote_solver.h): it starts as a box and is clipped by half-planes
 * alpha*a + beta*b <= gamma, one per window bound. Then the range of a + b*x over the region gives,
 * at any x, the offsets the windows allow: its extremes are found by climbing the boundary from
 * where the last search ended, O(1) each when x moves little between searches.
 *
 * The polygon owns its vertex arrays. Not thread-safe.
 */
#ifndef ZM_REMOTE_POLYGON_H
#define ZM_REMOTE_POLYGON_H

#include "must_check.h"

#include <stdbool.h>
#include <stddef.h>

/* Opaque. */
struct zm_remote_polygon;

/* An empty polygon (no vertex), or NULL when out of memory. */
ZM_MUST_CHECK struct zm_remote_polygon *zm_remote_polygon_new(void);
void zm_remote_polygon_free(struct zm_remote_polygon *polygon);

/* Makes the polygon the box [a_min, a_max] x [b_min, b_max]. -1 when out of memory. */
ZM_MUST_CHECK int zm_remote_polygon_box(struct zm_remote_polygon *polygon, double a_min,
                                        double a_max, double b_min, double b_max);
/* Keeps the part where alpha*a + beta*b <= gamma (Sutherland-Hodgman: it stays convex, and may
 * become empty). -1 when out of memory, the polygon then unchanged. */
ZM_MUST_CHECK int zm_remote_polygon_clip(struct zm_remote_polygon *polygon, double alpha,
                                         double beta, double gamma);
bool zm_remote_polygon_empty(const struct zm_remote_polygon *polygon);
/* Drops consecutive vertices that coincide (clipping through a vertex can repeat it), so that a
 * linear function is strictly unimodal along the boundary: call once clipping is done, before
 * zm_remote_polygon_extreme. */
void zm_remote_polygon_dedupe(struct zm_remote_polygon *polygon);

/* The largest (sign 1) or smallest (sign -1) value of a + b*x over the polygon, which must not be
 * empty, climbing from vertex *start; *start is left at the vertex found, for the next search. */
double zm_remote_polygon_extreme(const struct zm_remote_polygon *polygon, double x, double sign,
                                 size_t *start);

/* The vertices, in boundary order (for checks and tests). */
size_t zm_remote_polygon_vertex_count(const struct zm_remote_polygon *polygon);
void zm_remote_polygon_vertex(const struct zm_remote_polygon *polygon, size_t vertex, double *a,
                              double *b);

#endif
