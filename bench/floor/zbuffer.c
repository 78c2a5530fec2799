/* A plain float32 z-buffer: the floor that sortie's camera step is measured against.
 *
 * bench/bench_floor.py compiles this file with the system's C compiler and calls it through
 * ctypes; it is not part of sortie. It draws the three images of a frame over the same
 * triangles, from the same pose, with the same pinhole camera (x forward, y left, z up; a
 * pixel's ray has a forward component of 1, so depth is along the axis), and does only what
 * any rasteriser must: chunks of CHUNK triangles whose bounding sphere lies outside the view
 * skipped (sortie's own chunks and their spheres), each other triangle to the camera,
 * rejected when wholly outside one side of the view, clipped to the near plane, projected, and its box's pixel
 * centres tested with three edge functions; depth interpolated as 1/x across the screen, a pixel kept when
 * nearer. A kept pixel gets the depth, the triangle's object id and its lit colour (flat: no
 * texture), a pixel with no triangle the sky. No exactness, no tie rules, no culling of
 * chunks or hidden triangles, one pixel at a time as the compiler vectorises it.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#define NEAR 1e-3f
#define CHUNK 16 /* triangles a chunk (sortie.sim.chunks.CHUNK) */

typedef struct {
    float x, y, z;
} Vec;

typedef struct {
    float rot[9]; /* camera to world, row-major: world = rot @ camera */
    float eye[3];
    float focal, cx, cy;
    int width, height;
    float *depth;
    int32_t *ids;
    uint8_t *rgb;
} View;

static Vec to_camera(const View *v, const float *p) {
    float d[3] = {p[0] - v->eye[0], p[1] - v->eye[1], p[2] - v->eye[2]};
    const float *r = v->rot; /* camera = rot^T @ d */
    Vec c = {r[0] * d[0] + r[3] * d[1] + r[6] * d[2], r[1] * d[0] + r[4] * d[1] + r[7] * d[2],
             r[2] * d[0] + r[5] * d[1] + r[8] * d[2]};
    return c;
}

/* Whether all three corners lie outside one side of the view. */
static int outside(const View *v, const Vec *c) {
    float kw = v->cx / v->focal, kh = v->cy / v->focal;
    int out[5] = {1, 1, 1, 1, 1};
    for (int k = 0; k < 3; k++) {
        out[0] &= c[k].x < NEAR, out[1] &= c[k].y > kw * c[k].x, out[2] &= -c[k].y > kw * c[k].x;
        out[3] &= c[k].z > kh * c[k].x, out[4] &= -c[k].z > kh * c[k].x;
    }
    return out[0] | out[1] | out[2] | out[3] | out[4];
}

/* Whether the sphere (centre, radius) lies wholly outside one side of the view. */
static int sphere_outside(const View *v, const double *sphere) {
    float centre[3] = {(float)sphere[0], (float)sphere[1], (float)sphere[2]}, r = (float)sphere[3];
    Vec c = to_camera(v, centre);
    float kw = v->cx / v->focal, kh = v->cy / v->focal;
    float side = sqrtf(1.0f + kw * kw), top = sqrtf(1.0f + kh * kh); /* the planes' normals' lengths */
    return c.x < NEAR - r || c.y - kw * c.x > r * side || -c.y - kw * c.x > r * side ||
           c.z - kh * c.x > r * top || -c.z - kh * c.x > r * top;
}

/* Clip a polygon to x >= NEAR; returns its corner count (at most n + 1). */
static int clip_near(const Vec *in, int n, Vec *out) {
    int m = 0;
    for (int k = 0; k < n; k++) {
        Vec a = in[k], b = in[(k + 1) % n];
        int a_in = a.x >= NEAR, b_in = b.x >= NEAR;
        if (a_in) out[m++] = a;
        if (a_in != b_in) {
            float s = (NEAR - a.x) / (b.x - a.x);
            Vec p = {NEAR, a.y + s * (b.y - a.y), a.z + s * (b.z - a.z)};
            out[m++] = p;
        }
    }
    return m;
}

static inline float edge(float ax, float ay, float bx, float by, float px, float py) {
    return (bx - ax) * (py - ay) - (by - ay) * (px - ax);
}

/* Draw one projected triangle (screen x, y and 1/depth per corner): the edge functions and
 * 1/depth stepped along each row of its box, as plain rasterisers do. */
static void draw(const View *v, const float sx[3], const float sy[3], const float w[3], int32_t id,
                 const uint8_t *color) {
    float area = edge(sx[0], sy[0], sx[1], sy[1], sx[2], sy[2]);
    if (area == 0.0f) return;
    float inv = 1.0f / area;
    float lo_x = fminf(sx[0], fminf(sx[1], sx[2])), hi_x = fmaxf(sx[0], fmaxf(sx[1], sx[2]));
    float lo_y = fminf(sy[0], fminf(sy[1], sy[2])), hi_y = fmaxf(sy[0], fmaxf(sy[1], sy[2]));
    int j0 = (int)fmaxf(0.0f, ceilf(lo_x - 0.5f)), j1 = (int)fminf(v->width - 1.0f, floorf(hi_x - 0.5f));
    int i0 = (int)fmaxf(0.0f, ceilf(lo_y - 0.5f)), i1 = (int)fminf(v->height - 1.0f, floorf(hi_y - 0.5f));
    if (j0 > j1 || i0 > i1) return;
    /* Barycentric weights b0, b1 and 1/depth are linear in the pixel: a + dx * j + dy * i. */
    float dx0 = (sy[1] - sy[2]) * inv, dy0 = (sx[2] - sx[1]) * inv;
    float dx1 = (sy[2] - sy[0]) * inv, dy1 = (sx[0] - sx[2]) * inv;
    float px = j0 + 0.5f, py = i0 + 0.5f;
    float b0 = edge(sx[1], sy[1], sx[2], sy[2], px, py) * inv, b1 = edge(sx[2], sy[2], sx[0], sy[0], px, py) * inv;
    float dxz = dx0 * (w[0] - w[2]) + dx1 * (w[1] - w[2]), dyz = dy0 * (w[0] - w[2]) + dy1 * (w[1] - w[2]);
    float z = b0 * w[0] + b1 * w[1] + (1.0f - b0 - b1) * w[2];
    for (int i = i0; i <= i1; i++, b0 += dy0, b1 += dy1, z += dyz) {
        float c0 = b0, c1 = b1, cz = z;
        size_t k = (size_t)i * v->width + j0;
        for (int j = j0; j <= j1; j++, k++, c0 += dx0, c1 += dx1, cz += dxz) {
            if (c0 < 0.0f || c1 < 0.0f || c0 + c1 > 1.0f || cz <= v->depth[k]) continue;
            v->depth[k] = cz, v->ids[k] = id;
            memcpy(v->rgb + 3 * k, color, 3);
        }
    }
}

/* Draw one triangle (``c``: its corners), its object id ``id`` and colour ``color``. */
static void draw_triangle(const View *v, const float *c, int32_t id, const uint8_t *color) {
    Vec cam[3], poly[4];
    for (int k = 0; k < 3; k++) cam[k] = to_camera(v, c + 3 * k);
    if (outside(v, cam)) return;
    int m = clip_near(cam, 3, poly);
    float sx[4], sy[4], w[4];
    for (int k = 0; k < m; k++) {
        w[k] = 1.0f / poly[k].x;
        sx[k] = v->cx - v->focal * poly[k].y * w[k], sy[k] = v->cy - v->focal * poly[k].z * w[k];
    }
    for (int k = 1; k + 1 < m; k++) { /* a fan: one triangle, or two after clipping */
        float tx[3] = {sx[0], sx[k], sx[k + 1]}, ty[3] = {sy[0], sy[k], sy[k + 1]}, tw[3] = {w[0], w[k], w[k + 1]};
        draw(v, tx, ty, tw, id, color);
    }
}

/* Draw a frame: ``corners`` (T, 3, 3) float32, ``ids`` and ``colors`` (T, 3) per triangle,
 * ``members`` the CHUNK triangle indices of each of ``chunks`` chunks (-1 after a chunk's
 * last), ``bounds`` (7 doubles, the sphere's centre and radius first) per chunk, ``sky``
 * (width * height, 3); writes ``depth``, ``out_ids``, ``rgb``. */
void floor_frame(const float *corners, const int32_t *ids, const uint8_t *colors, const int32_t *members, long chunks, const double *bounds,
                 const float *rot, const float *eye, float focal, int width, int height,
                 const uint8_t *sky, float *depth, int32_t *out_ids, uint8_t *rgb) {
    View v = {.focal = focal, .cx = width / 2.0f, .cy = height / 2.0f, .width = width, .height = height,
              .depth = depth, .ids = out_ids, .rgb = rgb};
    memcpy(v.rot, rot, sizeof v.rot), memcpy(v.eye, eye, sizeof v.eye);
    size_t n = (size_t)width * height;
    for (size_t k = 0; k < n; k++) depth[k] = 0.0f, out_ids[k] = 0;
    memcpy(rgb, sky, 3 * n);
    for (long chunk = 0; chunk < chunks; chunk++) {
        if (sphere_outside(&v, bounds + 7 * chunk)) continue;
        for (const int32_t *m = members + CHUNK * chunk; m < members + CHUNK * (chunk + 1) && *m >= 0; m++)
            draw_triangle(&v, corners + 9 * (size_t)*m, ids[*m], colors + 3 * (size_t)*m);
    }
    for (size_t k = 0; k < n; k++) depth[k] = depth[k] > 0.0f ? 1.0f / depth[k] : INFINITY;
}
