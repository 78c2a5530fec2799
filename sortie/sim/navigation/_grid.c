/* The loops of a graph build around its ray casts (sortie.sim.navigation.kernels): the
 * horizontal probe rays made and their hits read (clearance._probe_chunk), the two tests of
 * room for the walker's body (surfaces.crowded, clearance.near_hits) and the pairs of linked
 * neighbours (links.link_neighbours). Every value is
 * rounded as numpy rounds it and every answer is a comparison of the same numbers numpy
 * compares, computed by the same operations (no fused multiply-add: the build passes
 * -ffp-contract=off), so graphs are the same with or without this module.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Whether column `near` has a hit, or is inside a solid, between low and high (see
 * surfaces._crowding): hits are sorted from the top down, NaN after the column's last. */
static int crowding(const double *z, const uint8_t *up, Py_ssize_t layers, Py_ssize_t near, double low, double high) {
    const double *column = z + near * layers;
    Py_ssize_t above_high = 0, above_low = 0;
    for (Py_ssize_t k = 0; k < layers; k++) {
        above_high += column[k] > high; /* NaN compares false, as in numpy */
        above_low += column[k] > low;
    }
    if (above_low > above_high) return 1;
    return above_high > 0 && up[near * layers + above_high - 1];
}

/* crowded(z (C, K) float64, up (C, K) uint8, nx, ny, columns (N,) int64, low (N,), high (N,),
 * offsets (M, 2) int64, out (N,) uint8): out[n] = 1 where a column at one of the offsets from
 * node n's column has a hit or a solid in (low[n], high[n]]. */
static PyObject *crowded(PyObject *self, PyObject *args) {
    Py_buffer z, up, columns, low, high, offsets, out;
    Py_ssize_t nx, ny;
    if (!PyArg_ParseTuple(args, "y*y*nny*y*y*y*w*", &z, &up, &nx, &ny, &columns, &low, &high, &offsets, &out)) return NULL;
    PyObject *result = NULL;
    Py_ssize_t cells = nx * ny, n = columns.len / (Py_ssize_t)sizeof(int64_t);
    Py_ssize_t layers = cells ? z.len / (Py_ssize_t)sizeof(double) / cells : 0;
    Py_ssize_t m = offsets.len / (Py_ssize_t)(2 * sizeof(int64_t));
    if (z.len != cells * layers * (Py_ssize_t)sizeof(double) || up.len != cells * layers ||
        low.len != n * (Py_ssize_t)sizeof(double) || high.len != low.len || out.len != n) {
        PyErr_SetString(PyExc_ValueError, "crowded: expected z (C, K) float64 and up (C, K) bool with C = nx * ny, "
                                          "columns (N,) int64, low and high (N,) float64, out (N,) bool");
        goto done;
    }
    const int64_t *col = columns.buf, *step = offsets.buf;
    const double *lo = low.buf, *hi = high.buf;
    uint8_t *blocked = out.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (col[i] < 0 || col[i] >= cells) {
            PyErr_SetString(PyExc_ValueError, "crowded: a column is off the grid");
            goto done;
        }
        int64_t ci = col[i] % nx, cj = col[i] / nx;
        for (Py_ssize_t k = 0; k < m && !blocked[i]; k++) {
            int64_t ni = ci + step[2 * k], nj = cj + step[2 * k + 1];
            if (ni < 0 || ni >= nx || nj < 0 || nj >= ny) continue;
            blocked[i] = (uint8_t)crowding(z.buf, up.buf, layers, nj * nx + ni, lo[i], hi[i]);
        }
    }
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&z), PyBuffer_Release(&up), PyBuffer_Release(&columns), PyBuffer_Release(&low);
    PyBuffer_Release(&high), PyBuffer_Release(&offsets), PyBuffer_Release(&out);
    return result;
}

/* Nodes sorted into square buckets of at least `size` metres: bucket b holds
 * node[first[b]] .. node[first[b + 1] - 1]. */
typedef struct {
    double x0, y0, size;
    int64_t nx, ny;
    int64_t *first, *node;
} Buckets;

static int64_t bucket_of(const Buckets *g, double v, double v0, int64_t count) {
    double k = floor((v - v0) / g->size);
    return k < 0 ? 0 : k >= (double)count ? count - 1 : (int64_t)k;
}

static int fill_buckets(Buckets *g, const double *xyz, Py_ssize_t n, double size) {
    double x1 = xyz[0], y1 = xyz[1];
    g->x0 = x1, g->y0 = y1;
    for (Py_ssize_t i = 1; i < n; i++) {
        g->x0 = fmin(g->x0, xyz[3 * i]), x1 = fmax(x1, xyz[3 * i]);
        g->y0 = fmin(g->y0, xyz[3 * i + 1]), y1 = fmax(y1, xyz[3 * i + 1]);
    }
    /* At most 2048 buckets a side: a wide scene gets bigger buckets, not more memory. */
    g->size = fmax(size, fmax(x1 - g->x0, y1 - g->y0) / 2048.0);
    g->nx = (int64_t)floor((x1 - g->x0) / g->size) + 1, g->ny = (int64_t)floor((y1 - g->y0) / g->size) + 1;
    g->first = calloc((size_t)(g->nx * g->ny + 1), sizeof(int64_t));
    g->node = malloc((size_t)n * sizeof(int64_t) + 1);
    int64_t *at = malloc((size_t)n * sizeof(int64_t) + 1);
    if (!g->first || !g->node || !at) {
        free(at);
        return 0;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        at[i] = bucket_of(g, xyz[3 * i + 1], g->y0, g->ny) * g->nx + bucket_of(g, xyz[3 * i], g->x0, g->nx);
        g->first[at[i] + 1]++;
    }
    for (int64_t b = 0; b < g->nx * g->ny; b++) g->first[b + 1] += g->first[b];
    int64_t *fill = malloc((size_t)(g->nx * g->ny) * sizeof(int64_t));
    if (!fill) {
        free(at);
        return 0;
    }
    memcpy(fill, g->first, (size_t)(g->nx * g->ny) * sizeof(int64_t));
    for (Py_ssize_t i = 0; i < n; i++) g->node[fill[at[i]]++] = i;
    free(fill), free(at);
    return 1;
}

/* near_hits(positions (N, 3) float64, points (H, 3) float64, radius, centre, scale, out (N,)
 * uint8): out[n] = 1 where a probe hit lies in node n's body, the test of
 * clearance.near_hits: the heights, scaled so that the body's band is as wide as its radius,
 * at most `radius` apart ((z_n + centre) * scale against z_p * scale), and the horizontal
 * gap's square under radius squared. Each hit is tried against the nodes of the buckets
 * around it, two each way (one would do but for rounding at a bucket's edge). */
static PyObject *near_hits(PyObject *self, PyObject *args) {
    Py_buffer positions, points, out;
    double radius, centre, scale;
    if (!PyArg_ParseTuple(args, "y*y*dddw*", &positions, &points, &radius, &centre, &scale, &out)) return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = positions.len / (Py_ssize_t)(3 * sizeof(double)), h = points.len / (Py_ssize_t)(3 * sizeof(double));
    Buckets g = {0};
    if (positions.len != n * 3 * (Py_ssize_t)sizeof(double) || points.len != h * 3 * (Py_ssize_t)sizeof(double) ||
        out.len != n || !(radius > 0)) {
        PyErr_SetString(PyExc_ValueError, "near_hits: expected positions (N, 3) and points (H, 3) float64, "
                                          "a positive radius, out (N,) bool");
        goto done;
    }
    if (n == 0 || h == 0) goto finished;
    if (!fill_buckets(&g, positions.buf, n, radius)) {
        PyErr_NoMemory();
        goto done;
    }
    const double *node = positions.buf, *hit = points.buf;
    uint8_t *blocked = out.buf;
    double r2 = radius * radius;
    for (Py_ssize_t p = 0; p < h; p++) {
        double px = hit[3 * p], py = hit[3 * p + 1], pz = hit[3 * p + 2] * scale;
        int64_t bi = bucket_of(&g, px, g.x0, g.nx), bj = bucket_of(&g, py, g.y0, g.ny);
        for (int64_t j = bj - 2; j <= bj + 2; j++) {
            if (j < 0 || j >= g.ny) continue;
            for (int64_t i = bi - 2; i <= bi + 2; i++) {
                if (i < 0 || i >= g.nx) continue;
                int64_t b = j * g.nx + i;
                for (int64_t k = g.first[b]; k < g.first[b + 1]; k++) {
                    const double *q = node + 3 * g.node[k];
                    double dx = q[0] - px, dy = q[1] - py;
                    if (fabs((q[2] + centre) * scale - pz) <= radius && dx * dx + dy * dy < r2) blocked[g.node[k]] = 1;
                }
            }
        }
    }
finished:
    result = Py_None;
    Py_INCREF(result);
done:
    free(g.first), free(g.node);
    PyBuffer_Release(&positions), PyBuffer_Release(&points), PyBuffer_Release(&out);
    return result;
}

/* probe_rays(positions (N, 3) float64, unit (8, 2) float64, heights (K,) float64, limit (8,)
 * float64, origins (N, 8, K, 3), directions (N, 8, K, 3), tmax (N, 8, K) float32): the rays of
 * clearance._probe_chunk, with numpy's roundings: an origin is the position rounded to float,
 * its height added in float; a direction is the unit rounded to float, level. */
static PyObject *probe_rays(PyObject *self, PyObject *args) {
    Py_buffer positions, unit, heights, limit, o, d, tmax;
    if (!PyArg_ParseTuple(args, "y*y*y*y*w*w*w*", &positions, &unit, &heights, &limit, &o, &d, &tmax)) return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = positions.len / (Py_ssize_t)(3 * sizeof(double)), k = heights.len / (Py_ssize_t)sizeof(double);
    Py_ssize_t rays = n * 8 * k;
    if (positions.len != n * 3 * (Py_ssize_t)sizeof(double) || unit.len != 16 * (Py_ssize_t)sizeof(double) ||
        limit.len != 8 * (Py_ssize_t)sizeof(double) || o.len != rays * 3 * (Py_ssize_t)sizeof(float) ||
        d.len != o.len || tmax.len != rays * (Py_ssize_t)sizeof(float)) {
        PyErr_SetString(PyExc_ValueError, "probe_rays: expected positions (N, 3), unit (8, 2), heights (K,) and limit "
                                          "(8,) float64; origins and directions (N, 8, K, 3), tmax (N, 8, K) float32");
        goto done;
    }
    const double *at = positions.buf, *u = unit.buf, *h = heights.buf, *lim = limit.buf;
    float *origin = o.buf, *direction = d.buf, *far = tmax.buf;
    for (Py_ssize_t i = 0; i < n; i++)
        for (int m = 0; m < 8; m++)
            for (Py_ssize_t j = 0; j < k; j++) {
                Py_ssize_t r = (i * 8 + m) * k + j;
                origin[3 * r] = (float)at[3 * i], origin[3 * r + 1] = (float)at[3 * i + 1];
                origin[3 * r + 2] = (float)at[3 * i + 2] + (float)h[j];
                direction[3 * r] = (float)u[2 * m], direction[3 * r + 1] = (float)u[2 * m + 1];
                direction[3 * r + 2] = 0.0f;
                far[r] = (float)lim[m];
            }
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&positions), PyBuffer_Release(&unit), PyBuffer_Release(&heights), PyBuffer_Release(&limit);
    PyBuffer_Release(&o), PyBuffer_Release(&d), PyBuffer_Release(&tmax);
    return result;
}

/* probe_read(origins, directions (R, 3) float32, t (R,) float32, reach (8,) float64, K,
 * points (H, 3) float64, blocked (R / (8 K), 8) uint8): where each probe hit, in ray order
 * (origin + direction * t in float, as numpy computes it, then widened), H being the number of
 * finite t; and whether any of a direction's K probes hit before the neighbour's centre. */
static PyObject *probe_read(PyObject *self, PyObject *args) {
    Py_buffer o, d, t, reach, points, blocked;
    Py_ssize_t k;
    if (!PyArg_ParseTuple(args, "y*y*y*y*nw*w*", &o, &d, &t, &reach, &k, &points, &blocked)) return NULL;
    PyObject *result = NULL;
    Py_ssize_t rays = t.len / (Py_ssize_t)sizeof(float), n = k > 0 ? rays / (8 * k) : 0, h = 0;
    const float *origin = o.buf, *direction = d.buf, *dist = t.buf;
    for (Py_ssize_t r = 0; r < rays; r++) h += isfinite(dist[r]) != 0;
    if (k <= 0 || rays != n * 8 * k || o.len != rays * 3 * (Py_ssize_t)sizeof(float) || d.len != o.len ||
        reach.len != 8 * (Py_ssize_t)sizeof(double) || points.len != h * 3 * (Py_ssize_t)sizeof(double) ||
        blocked.len != n * 8) {
        PyErr_SetString(PyExc_ValueError, "probe_read: expected origins and directions (R, 3), t (R,) float32 with "
                                          "R = N * 8 * K, reach (8,) float64, points (finite t, 3) float64, "
                                          "blocked (N, 8) bool");
        goto done;
    }
    const double *lead = reach.buf;
    double *point = points.buf;
    uint8_t *short_of = blocked.buf;
    for (Py_ssize_t r = 0, p = 0; r < rays; r++) {
        float hit = dist[r];
        if (!isfinite(hit)) continue;
        for (int c = 0; c < 3; c++) point[3 * p + c] = (double)(origin[3 * r + c] + direction[3 * r + c] * hit);
        p++;
        Py_ssize_t move = r / k;  /* node * 8 + direction */
        if ((double)hit < lead[move % 8]) short_of[move] = 1;
    }
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&o), PyBuffer_Release(&d), PyBuffer_Release(&t), PyBuffer_Release(&reach);
    PyBuffer_Release(&points), PyBuffer_Release(&blocked);
    return result;
}

/* link_pairs(columns (N,) int64, z (N,) float64, blocked (N, 8) uint8, slots (nx * ny, L)
 * int64, nx, ny, step, a, b (N * 4 * L,) int64) -> count: the edges of links.link_neighbours,
 * in its order (direction, then node, then the neighbour column's level): node a[k] and node
 * b[k] in the column one of the first four STEPS away, heights at most `step` apart, neither
 * probe toward the other blocked. */
static const int64_t STEP_I[4] = {1, 1, 0, -1}, STEP_J[4] = {0, 1, 1, 1};

static PyObject *link_pairs(PyObject *self, PyObject *args) {
    Py_buffer columns, z, blocked, slots, a, b;
    Py_ssize_t nx, ny;
    double step;
    if (!PyArg_ParseTuple(args, "y*y*y*y*nndw*w*", &columns, &z, &blocked, &slots, &nx, &ny, &step, &a, &b))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = columns.len / (Py_ssize_t)sizeof(int64_t), cells = nx * ny;
    Py_ssize_t per = cells ? slots.len / (Py_ssize_t)sizeof(int64_t) / cells : 0, count = 0;
    if (z.len != n * (Py_ssize_t)sizeof(double) || blocked.len != n * 8 ||
        slots.len != cells * per * (Py_ssize_t)sizeof(int64_t) || a.len != n * 4 * per * (Py_ssize_t)sizeof(int64_t) ||
        b.len != a.len) {
        PyErr_SetString(PyExc_ValueError, "link_pairs: expected columns (N,) int64, z (N,) float64, blocked (N, 8) "
                                          "bool, slots (nx * ny, L) int64, a and b (N * 4 * L,) int64");
        goto done;
    }
    const int64_t *col = columns.buf, *slot = slots.buf;
    const double *height = z.buf;
    const uint8_t *stop = blocked.buf;
    int64_t *first = a.buf, *second = b.buf;
    for (int d = 0; d < 4; d++)
        for (Py_ssize_t i = 0; i < n; i++) {
            if (col[i] < 0 || col[i] >= cells) {
                PyErr_SetString(PyExc_ValueError, "link_pairs: a column is off the grid");
                goto done;
            }
            int64_t ci = col[i] % nx + STEP_I[d], cj = col[i] / nx + STEP_J[d];
            if (ci < 0 || ci >= nx || cj < 0 || cj >= ny || stop[8 * i + d]) continue;
            for (Py_ssize_t k = 0; k < per; k++) {
                int64_t other = slot[(cj * nx + ci) * per + k];
                if (other < 0) continue; /* -1 pads the end of a column's list */
                if (other >= n) {
                    PyErr_SetString(PyExc_ValueError, "link_pairs: a slot names no node");
                    goto done;
                }
                if (fabs(height[i] - height[other]) <= step && !stop[8 * other + d + 4])
                    first[count] = i, second[count] = other, count++;
            }
        }
    result = PyLong_FromSsize_t(count);
done:
    PyBuffer_Release(&columns), PyBuffer_Release(&z), PyBuffer_Release(&blocked), PyBuffer_Release(&slots);
    PyBuffer_Release(&a), PyBuffer_Release(&b);
    return result;
}

/* edge_rows(a (P,) int64, b (P,) int64, positions (N, 3) float64, indptr (N + 1,) int32, indices
 * (2P,) int32, lengths (2P,) float64) -> 0, or 1 if a pair repeats: the CSR matrix that scipy
 * makes of the pairs both ways round (links.link_neighbours), each row's columns in order, the
 * weights the lengths numpy's norm gives (the squares summed x, y then z, then the root). */
static PyObject *edge_rows(PyObject *self, PyObject *args) {
    Py_buffer a, b, positions, indptr, indices, lengths;
    if (!PyArg_ParseTuple(args, "y*y*y*w*w*w*", &a, &b, &positions, &indptr, &indices, &lengths)) return NULL;
    PyObject *result = NULL;
    Py_ssize_t pairs = a.len / (Py_ssize_t)sizeof(int64_t), n = positions.len / (Py_ssize_t)(3 * sizeof(double));
    if (b.len != a.len || indptr.len != (n + 1) * (Py_ssize_t)sizeof(int32_t) ||
        indices.len != 2 * pairs * (Py_ssize_t)sizeof(int32_t) || lengths.len != 2 * pairs * (Py_ssize_t)sizeof(double) ||
        2 * pairs > (Py_ssize_t)INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "edge_rows: expected a and b (P,) int64, positions (N, 3) float64, indptr "
                                          "(N + 1,) int32, indices (2P,) int32 and lengths (2P,) float64");
        goto done;
    }
    const int64_t *first = a.buf, *second = b.buf;
    const double *xyz = positions.buf;
    int32_t *start = indptr.buf, *column = indices.buf;
    double *weight = lengths.buf;
    memset(start, 0, indptr.len);
    for (Py_ssize_t k = 0; k < pairs; k++) {
        if (first[k] < 0 || first[k] >= n || second[k] < 0 || second[k] >= n) {
            PyErr_SetString(PyExc_ValueError, "edge_rows: a pair names no node");
            goto done;
        }
        start[first[k] + 1]++, start[second[k] + 1]++;
    }
    for (Py_ssize_t i = 0; i < n; i++) start[i + 1] += start[i];
    for (Py_ssize_t k = 0; k < pairs; k++) { /* fill from each row's end down, then sort */
        const double *p = xyz + 3 * first[k], *q = xyz + 3 * second[k];
        double dx = p[0] - q[0], dy = p[1] - q[1], dz = p[2] - q[2];
        double length = sqrt((dx * dx + dy * dy) + dz * dz);
        int32_t at = --start[first[k] + 1];
        column[at] = (int32_t)second[k], weight[at] = length;
        at = --start[second[k] + 1];
        column[at] = (int32_t)first[k], weight[at] = length;
    }
    /* start[i + 1] now holds row i's start: shift back, then sort each (short) row. */
    for (Py_ssize_t i = 0; i < n; i++) start[i] = start[i + 1];
    start[n] = (int32_t)(2 * pairs);
    int repeated = 0;
    for (Py_ssize_t i = 0; i < n; i++)
        for (int32_t k = start[i] + 1; k < start[i + 1]; k++) {
            int32_t c = column[k], m = k;
            double w = weight[k];
            for (; m > start[i] && column[m - 1] > c; m--) column[m] = column[m - 1], weight[m] = weight[m - 1];
            column[m] = c, weight[m] = w;
            if (m > start[i] && column[m - 1] == c) repeated = 1;
        }
    result = PyLong_FromLong(repeated);
done:
    PyBuffer_Release(&a), PyBuffer_Release(&b), PyBuffer_Release(&positions);
    PyBuffer_Release(&indptr), PyBuffer_Release(&indices), PyBuffer_Release(&lengths);
    return result;
}

/* The grid indices below and above a fractional coordinate, one index on a grid line
 * (smoothing._corner_indices): numpy's round is rint's, to even. */
static void corner_indices(double f, int64_t *below, int64_t *above) {
    double whole = rint(f);
    if (fabs(f - whole) < 1e-6) { /* smoothing.SNAP */
        *below = *above = (int64_t)whole;
    } else {
        *below = (int64_t)floor(f), *above = (int64_t)(floor(f) + 1);
    }
}

/* Whether corner (i, j) is on the grid and holds a usable node within `step` of height z. */
static int corner_held(const int64_t *slots, Py_ssize_t per, const double *nz, const uint8_t *usable,
                       Py_ssize_t nodes, int64_t nx, int64_t ny, int64_t i, int64_t j, double z, double step) {
    if (i < 0 || i >= nx || j < 0 || j >= ny) return 0;
    const int64_t *ids = slots + (j * nx + i) * per;
    for (Py_ssize_t k = 0; k < per; k++)
        if (ids[k] >= 0 && ids[k] < nodes && usable[ids[k]] && fabs(nz[ids[k]] - z) <= step) return 1;
    return 0;
}

/* stretches_clear(start (3,) float64, ends (K, 3) float64, counts (K,) int64, slots (C, L)
 * int64, z (N,) float64, usable (N,) bool, x0, y0, cell, nx, ny, step, out (K,) bool): what
 * smoothing.Corridor.clear_each answers, by the same operations per sample: counts[k] samples
 * at np.linspace(0, 1, count) (k times 1 / (count - 1), the last 1), each at
 * start + sample * (end - start), all four grid corners of each held. */
static PyObject *stretches_clear(PyObject *self, PyObject *args) {
    Py_buffer start, ends, counts, slots, z, usable, out;
    double x0, y0, cell, step;
    Py_ssize_t nx, ny;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*dddnndw*", &start, &ends, &counts, &slots, &z, &usable, &x0, &y0,
                          &cell, &nx, &ny, &step, &out))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t k_all = counts.len / (Py_ssize_t)sizeof(int64_t), nodes = z.len / (Py_ssize_t)sizeof(double);
    Py_ssize_t cells = nx * ny, per = cells > 0 ? slots.len / (Py_ssize_t)sizeof(int64_t) / cells : 0;
    if (start.len != 3 * (Py_ssize_t)sizeof(double) || ends.len != 3 * k_all * (Py_ssize_t)sizeof(double) ||
        out.len != k_all || usable.len != nodes || cells <= 0 || slots.len != cells * per * (Py_ssize_t)sizeof(int64_t)) {
        PyErr_SetString(PyExc_ValueError, "stretches_clear: expected start (3,) float64, ends (K, 3) float64, "
                                          "counts (K,) int64, slots (nx * ny, L) int64, z (N,) float64, usable (N,) "
                                          "bool and out (K,) bool");
        goto done;
    }
    const double *a = start.buf, *e = ends.buf, *nz = z.buf;
    const int64_t *count = counts.buf, *slot = slots.buf;
    const uint8_t *use = usable.buf;
    uint8_t *clear = out.buf;
    for (Py_ssize_t k = 0; k < k_all; k++) {
        if (count[k] < 2) {
            PyErr_SetString(PyExc_ValueError, "stretches_clear: a stretch needs 2 samples or more");
            goto done;
        }
        double d[3] = {e[3 * k] - a[0], e[3 * k + 1] - a[1], e[3 * k + 2] - a[2]};
        double unit = 1.0 / (double)(count[k] - 1);
        int held = 1;
        for (int64_t m = 0; m < count[k] && held; m++) {
            double s = m == count[k] - 1 ? 1.0 : (double)m * unit + 0.0;
            double px = a[0] + s * d[0], py = a[1] + s * d[1], pz = a[2] + s * d[2];
            int64_t i0, i1, j0, j1;
            corner_indices((px - x0) / cell, &i0, &i1);
            corner_indices((py - y0) / cell, &j0, &j1);
            held = corner_held(slot, per, nz, use, nodes, nx, ny, i0, j0, pz, step) &&
                   corner_held(slot, per, nz, use, nodes, nx, ny, i0, j1, pz, step) &&
                   corner_held(slot, per, nz, use, nodes, nx, ny, i1, j0, pz, step) &&
                   corner_held(slot, per, nz, use, nodes, nx, ny, i1, j1, pz, step);
        }
        clear[k] = (uint8_t)held;
    }
    result = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&start), PyBuffer_Release(&ends), PyBuffer_Release(&counts), PyBuffer_Release(&slots);
    PyBuffer_Release(&z), PyBuffer_Release(&usable), PyBuffer_Release(&out);
    return result;
}

/* components(indptr (N + 1,) int32, indices (E,) int32, labels (N,) int32) -> count: each
 * node's connected component, numbered as scipy's connected_components(directed=False)
 * numbers them on a symmetric graph: in the order of each component's lowest node. */
static PyObject *components(PyObject *self, PyObject *args) {
    Py_buffer indptr, indices, labels;
    if (!PyArg_ParseTuple(args, "y*y*w*", &indptr, &indices, &labels)) return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = labels.len / (Py_ssize_t)sizeof(int32_t), edges = indices.len / (Py_ssize_t)sizeof(int32_t);
    int32_t *stack = NULL;
    if (indptr.len != (n + 1) * (Py_ssize_t)sizeof(int32_t) || n > (Py_ssize_t)INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "components: expected indptr (N + 1,) int32, indices (E,) int32 and "
                                          "labels (N,) int32");
        goto done;
    }
    const int32_t *start = indptr.buf, *to = indices.buf;
    int32_t *label = labels.buf, count = 0;
    stack = malloc((n ? n : 1) * sizeof(int32_t));
    if (!stack) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) label[i] = -1;
    for (Py_ssize_t root = 0; root < n; root++) {
        if (label[root] >= 0) continue;
        Py_ssize_t top = 0;
        stack[top++] = (int32_t)root, label[root] = count;
        while (top) {
            int32_t node = stack[--top];
            if (start[node] < 0 || start[node + 1] > edges || start[node] > start[node + 1]) {
                PyErr_SetString(PyExc_ValueError, "components: indptr does not span the edges");
                goto done;
            }
            for (int32_t k = start[node]; k < start[node + 1]; k++) {
                int32_t next = to[k];
                if (next < 0 || next >= n) {
                    PyErr_SetString(PyExc_ValueError, "components: an edge names no node");
                    goto done;
                }
                if (label[next] < 0) label[next] = count, stack[top++] = next;
            }
        }
        count++;
    }
    result = PyLong_FromLong(count);
done:
    free(stack);
    PyBuffer_Release(&indptr), PyBuffer_Release(&indices), PyBuffer_Release(&labels);
    return result;
}

/* A shortest-path search that pops nodes in the order scipy 1.17's dijkstra pops them, so that
 * it finds the same distances and the same predecessors: scipy keeps (-distance, node) pairs in
 * a std::priority_queue, so the nearest node comes first and, among equally near ones, the one
 * with the larger index; a node is pushed again whenever its distance strictly drops, and a
 * popped pair whose distance is no longer the node's is skipped. Every pair in the queue is
 * distinct, so any heap with that order pops the same sequence. Once `target` is popped its
 * distance and every predecessor on its path are final (weights are not negative: a later pop
 * can only offer a distance at least as long, and only a strictly shorter one replaces a
 * predecessor), so the search stops there; target -1 searches every node, as scipy does. */
typedef struct {
    double d;
    uint32_t node;
} Entry;

static int comes_first(Entry a, Entry b) { return a.d < b.d || (!(b.d < a.d) && a.node > b.node); }

typedef struct {
    Entry *items;
    size_t size, room;
} Heap;

static int heap_push(Heap *h, Entry e) {
    if (h->size == h->room) {
        size_t room = h->room ? 2 * h->room : 1024;
        Entry *items = realloc(h->items, room * sizeof(Entry));
        if (!items) return -1;
        h->items = items, h->room = room;
    }
    size_t i = h->size++;
    while (i > 0 && comes_first(e, h->items[(i - 1) / 2])) {
        h->items[i] = h->items[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->items[i] = e;
    return 0;
}

static Entry heap_pop(Heap *h) {
    Entry top = h->items[0], last = h->items[--h->size];
    size_t i = 0, n = h->size;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= n) break;
        if (child + 1 < n && comes_first(h->items[child + 1], h->items[child])) child++;
        if (!comes_first(h->items[child], last)) break;
        h->items[i] = h->items[child];
        i = child;
    }
    if (n) h->items[i] = last;
    return top;
}

/* search(indptr (N + 1,) int32, indices (E,) int32, weights (E,) float64, source, target,
 * dist (N,) float64, pred (N,) int32) -> nodes popped: fills dist (inf where not reached) and
 * pred (-9999 where none, as scipy) for the nodes the search reached. */
static PyObject *search(PyObject *self, PyObject *args) {
    Py_buffer indptr, indices, weights, dist, pred;
    Py_ssize_t source, target;
    if (!PyArg_ParseTuple(args, "y*y*y*nnw*w*", &indptr, &indices, &weights, &source, &target, &dist, &pred))
        return NULL;
    PyObject *result = NULL;
    Heap heap = {NULL, 0, 0};
    Py_ssize_t n = dist.len / (Py_ssize_t)sizeof(double), edges = indices.len / (Py_ssize_t)sizeof(int32_t);
    const int32_t *start = indptr.buf, *to = indices.buf;
    const double *w = weights.buf;
    double *d = dist.buf;
    int32_t *p = pred.buf;
    if (indptr.len != (n + 1) * (Py_ssize_t)sizeof(int32_t) || pred.len != n * (Py_ssize_t)sizeof(int32_t) ||
        weights.len != edges * (Py_ssize_t)sizeof(double) || n > (Py_ssize_t)UINT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "search: expected indptr (N + 1,) int32, indices (E,) int32, weights "
                                          "(E,) float64, dist (N,) float64 and pred (N,) int32");
        goto done;
    }
    if (source < 0 || source >= n || target < -1 || target >= n) {
        PyErr_Format(PyExc_ValueError, "search: source %zd or target %zd is not a node of 0..%zd", source, target,
                     n - 1);
        goto done;
    }
    if (start[0] != 0 || start[n] != edges) {
        PyErr_SetString(PyExc_ValueError, "search: indptr does not span the edges");
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) d[i] = INFINITY, p[i] = -9999;
    Py_ssize_t popped = 0;
    d[source] = 0.0;
    if (heap_push(&heap, (Entry){0.0, (uint32_t)source})) goto nomemory;
    while (heap.size) {
        Entry v = heap_pop(&heap);
        if (d[v.node] < v.d) continue; /* a shorter way was found after this was pushed */
        popped++;
        if ((Py_ssize_t)v.node == target) break;
        for (int32_t k = start[v.node]; k < start[v.node + 1]; k++) {
            if (k < 0 || k >= edges || to[k] < 0 || to[k] >= n) {
                PyErr_SetString(PyExc_ValueError, "search: an edge names no node");
                goto done;
            }
            double next = v.d + w[k];
            if (d[to[k]] > next) {
                d[to[k]] = next;
                if (heap_push(&heap, (Entry){next, (uint32_t)to[k]})) goto nomemory;
                p[to[k]] = (int32_t)v.node;
            }
        }
    }
    result = PyLong_FromSsize_t(popped);
    goto done;
nomemory:
    PyErr_NoMemory();
done:
    free(heap.items);
    PyBuffer_Release(&indptr), PyBuffer_Release(&indices), PyBuffer_Release(&weights);
    PyBuffer_Release(&dist), PyBuffer_Release(&pred);
    return result;
}

static PyMethodDef methods[] = {
    {"crowded", crowded, METH_VARARGS, "crowded(z, up, nx, ny, columns, low, high, offsets, out)."},
    {"probe_rays", probe_rays, METH_VARARGS, "probe_rays(positions, unit, heights, limit, origins, directions, tmax)."},
    {"probe_read", probe_read, METH_VARARGS, "probe_read(origins, directions, t, reach, k, points, blocked)."},
    {"link_pairs", link_pairs, METH_VARARGS, "link_pairs(columns, z, blocked, slots, nx, ny, step, a, b) -> count."},
    {"near_hits", near_hits, METH_VARARGS, "near_hits(positions, points, radius, centre, scale, out)."},
    {"edge_rows", edge_rows, METH_VARARGS, "edge_rows(a, b, positions, indptr, indices, lengths) -> 1 if a pair repeats."},
    {"stretches_clear", stretches_clear, METH_VARARGS,
     "stretches_clear(start, ends, counts, slots, z, usable, x0, y0, cell, nx, ny, step, out)."},
    {"components", components, METH_VARARGS, "components(indptr, indices, labels) -> count."},
    {"search", search, METH_VARARGS, "search(indptr, indices, weights, source, target, dist, pred) -> nodes popped."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_grid",
                                    "Room for the walker's body in a graph build (sortie.sim.navigation.kernels).", -1,
                                    methods};

PyMODINIT_FUNC PyInit__grid(void) { return PyModule_Create(&module); }
