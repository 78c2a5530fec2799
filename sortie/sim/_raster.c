/* The camera as a rasteriser: which triangle each pixel's ray meets first, without Embree.
 *
 * Every camera ray starts at the eye, so each triangle can be walked once over the pixels its
 * projection may cover, keeping the nearest per pixel (a z-buffer), instead of every ray
 * searching a tree. Each pixel's candidates are measured with the exact double-precision
 * formula the ray caster uses (Moeller-Trumbore from the float32 corners and ray, one fixed
 * order of IEEE operations, no fused multiply-add: the build passes -ffp-contract=off). Where
 * the answer is clear, the pixel gets the very hit its cast ray would: the same triangle and
 * the same bits of t, u and v. Where it is not, the pixel is marked unsure and
 * sortie.sim.raster casts its ray through the ray caster, whose nudges and coincident-face
 * rules decide it the same way on every CPU. Unsure means:
 *
 * - EDGE: the nearest candidate's hit lies within a band of its outline (inside or out), where
 *   Embree's float32 test may decide either way;
 * - TIE: another candidate lies within rounding of the same depth;
 * - APART: the nearest candidate's triangle has a coincident partner (the ray caster counts
 *   faces up to a tenth of a millimetre apart as in one plane, sortie.sim.exact) whose hit may
 *   lie beyond the tie margin, by how far the partner's corners lie off its plane
 *   (sortie.sim.raster.apart) over the cosine: the caster may give the pixel to that partner.
 *   Marked as EDGE, which is reset likewise when a nearer candidate comes;
 * - forced: a triangle seen nearly edge-on may cover the pixel, or a hit lies at the eye
 *   (kept whatever comes nearer).
 *
 * The bands are wide (a fifth of a millimetre, more at grazing angles) against Embree's
 * float32 errors (micrometres), so a pixel left sure is one every CPU agrees on.
 *
 * Triangles come in chunks of CHUNK lying near one another, each with a bounding box and the
 * sphere around it (sortie.sim.chunks makes them): a chunk out of view (told by its sphere),
 * or behind what nearer chunks drew (by its box), is skipped whole, and chunks are drawn
 * nearest first. The order decides only how much work is skipped, never a pixel's answer: a
 * sure pixel gets its cast ray's hit and an unsure one is cast, whichever triangle came first.
 *
 * ``output``, once the unsure pixels are cast and merged in, writes the frame's id and RGB
 * images in one pass (see the comment above it).
 *
 * On a CPU with AVX2 the pixel loops run four pixels at once, and a chunk's triangles take
 * their first steps four at a time (``simd_on``); each lane does the one-pixel (one-triangle)
 * path's IEEE operations in its order, so both give the same bits, and a test holds them to
 * it (SORTIE_RASTER_SIMD=0 or ``simd(False)`` keeps to one at a time).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_exact.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HAVE_AVX2_PATH 1
#endif

/* Functions rounding with ceil and floor are built twice, with SSE4.1 (one instruction each)
 * and without, the loader choosing by the CPU: either way the same whole numbers. The loader's
 * choice (an ifunc) needs glibc and ELF; elsewhere (macOS, musl) they are built once, plain. */
#if defined(HAVE_AVX2_PATH) && defined(__GLIBC__) && defined(__ELF__)
#define ROUNDED __attribute__((target_clones("sse4.1", "default")))
#else
#define ROUNDED
#endif

#define NEAR 1e-3          /* metres ahead of the eye: nothing nearer is rasterised */
#define BAND 2e-4          /* metres: a hit this close to an outline is unsure */
#define BAND_SLOPE 4e-6    /* and this much more per metre of distance over the cosine */
#define GRAZING 1e-4       /* a triangle whose plane passes this close (per metre) is edge-on */
#define TIE_SLOPE 1e-5     /* depths within this share of each other are a tie, */
#define TIE_FLOOR 1e-5     /* plus this many metres, */
#define TIE_GRAZING 1e-6   /* plus this share over the cosine */
/* The most a tie margin can stretch a depth, on a triangle not seen edge-on (see forms). */
#define FAR_SLOPE (1.0 / (1.0 - TIE_SLOPE - TIE_GRAZING / GRAZING))

#define CHUNK 16           /* triangles per chunk (sortie.sim.chunks.CHUNK) */
#define BOUND 7            /* doubles a chunk's bounds: box centre, sphere radius, box half sides */
#define MARGIN 2.0         /* pixels: triangles are clipped this far outside the image */
#define SMALL 16           /* pixels: a footprint box this small is tested whole */
#define SLACK 0.05         /* pixels: a footprint is grown this much more (rounding) */

#define EDGE 1 /* Best.state: EDGE and TIE are reset when a nearer candidate comes, */
#define TIE 2
#define FORCED 4 /* FORCED stays */

/* The pixels' nearest candidates so far, an array per field (the vector path reads four
 * pixels' depths and margins at once): depth and tie margin, triangle (-1: none), state. */
typedef struct {
    double *t, *margin;
    int32_t *tri;
    uint8_t *state;
} Best;

#define TILE 8 /* pixels a side of a tile of the coarse depth record */

/* A coarse depth record, a tile per TILE x TILE pixels, to tell at once that a chunk or a
 * triangle lies behind what is drawn: a tile's farthest depth (with tie margin) over its
 * pixels, +inf while one has no hit; recomputed when needed after a pixel of it changed. */
typedef struct {
    double *far;
    uint8_t *stale;
    int across; /* tiles a row */
} Tiles;

/* What a frame did, counted (``work`` gives the last frame's): chunks in view or near the eye,
 * those skipped whole as hidden, triangles set up (of the chunks drawn), and triangles whose
 * pixels were tested. Tests hold the culling to it, benchmarks report it. */
typedef struct {
    long shown, hidden, set_up, tested;
} Work;

typedef struct {
    double eye[3], axes[3][3]; /* axes[k]: camera axis k (forward, left, up) in world terms */
    double focal, reach_max, close;
    double slope_w, slope_h, side_w, side_h; /* the view's sides, for outside and chunk_matters */
    int width, height;
    const float *dirs; /* each pixel's ray (x, y, z), or with ``turned`` the rows x, y and z at zero yaw */
    const double *apart; /* per triangle: how far its partners' corners lie off its plane (APART above) */
    int turned;
    float cos, sin; /* the yaw's turn (sortie.sim.camera.yaw_turn) */
    Best best;    /* the frame's pixels (from its Scratch) */
    Tiles tiles;  /* and its tiles */
    int *columns; /* two a row: a triangle's first and last column */
    Work *work;   /* what the frame did, for ``work`` */
} Frame;

/* A triangle ready for the pixel loop. Over a row, the Moeller-Trumbore numerators of the
 * pixel's ray (det, u and v times det) are linear in the column: ``det[0] + det[1] * col +
 * det[2] * row`` and so on, signs made positive ahead of the eye. The distance is t0 / det. */
typedef struct {
    double e1[3], e2[3], sv[3]; /* the corners b - a, c - a and the eye - a */
    double det[3], un[3], vn[3], t0, twice_area, h, scale, reach[3], far_slope, angle;
    double band_far, spread; /* the pixel test's band beyond BAND * det, and its cosine's numerator */
    int32_t index;
    double apart; /* how far its partners lie off its plane (APART in the module comment) */
} Setup;

/* Whether the pixel loops run four pixels an instruction (AVX2): set when the module loads,
 * off with SORTIE_RASTER_SIMD=0 or on a CPU without AVX2; ``simd`` sets it for tests. */
static int simd_on;

/* Plain minimum and maximum: libm's fmin and fmax are calls that also order NaNs. */
static inline double lesser(double a, double b) { return a < b ? a : b; }
static inline double greater(double a, double b) { return a > b ? a : b; }

static double dot3(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static void cross3(const double p[3], const double q[3], double out[3]) {
    out[0] = p[1] * q[2] - p[2] * q[1];
    out[1] = p[2] * q[0] - p[0] * q[2];
    out[2] = p[0] * q[1] - p[1] * q[0];
}

/* Keep the nearest candidate of pixel ``k``; mark ties (see the module comment). */
static inline void consider(const Best *b, size_t k, double t, double margin, int32_t tri, int edge) {
    uint8_t fresh = (b->state[k] & FORCED) | (edge ? EDGE : 0);
    if (b->tri[k] < 0) {
        b->t[k] = t, b->margin[k] = margin, b->tri[k] = tri, b->state[k] = fresh;
        return;
    }
    double m = margin > b->margin[k] ? margin : b->margin[k];
    if (t < b->t[k] - m) {
        b->t[k] = t, b->margin[k] = margin, b->tri[k] = tri, b->state[k] = fresh;
    } else if (t <= b->t[k] + m) {
        b->state[k] |= TIE;
        if (t < b->t[k]) b->t[k] = t, b->margin[k] = margin, b->tri[k] = tri;
    }
}

/* A candidate of pixel ``k`` at distance ``t`` that passed the tests of test_pixel. */
static inline void candidate(const Frame *f, const Setup *s, size_t k, double t, double inv_cos, int edge) {
    if (t < NEAR) {
        f->best.state[k] |= FORCED;
        return;
    }
    double margin = TIE_SLOPE * t + TIE_FLOOR + TIE_GRAZING * t * inv_cos;
    /* a partner's hit lies at most apart / cosine away (twice that: room for rounding) */
    consider(&f->best, k, t, margin, s->index, edge || s->apart * inv_cos * 2.0 > margin);
}

/* Test the pixel ``k`` whose numerators are ``det``, ``un``, ``vn`` (see Setup). Every
 * operation here is one of test_row_avx2's lanes too, so both paths keep the same bits. */
static inline void test_pixel(const Frame *f, const Setup *s, size_t k, double det, double un, double vn) {
    if (det <= 0.0) return; /* the plane is behind the eye, or seen edge-on */
    const Best *b = &f->best;
    /* Behind the nearest by more than any tie margin (s->far_slope bounds this one's)? */
    double far = greater(b->t[k] + b->margin[k], (b->t[k] + TIE_FLOOR) * s->far_slope);
    if (s->t0 > far * det) return;
    double band = BAND * det + s->band_far;
    double wn = det - un - vn; /* band and the gaps below are all times det */
    double gap = lesser(lesser(un * s->reach[0], vn * s->reach[1]), wn * s->reach[2]);
    if (gap < -band) return;
    candidate(f, s, k, s->t0 / det, s->spread / det, gap <= band);
}

/* Camera coordinates (forward, left, up) of a world point. */
static void to_camera(const Frame *f, const float *corner, double out[3]) {
    double rel[3] = {(double)corner[0] - f->eye[0], (double)corner[1] - f->eye[1], (double)corner[2] - f->eye[2]};
    for (int k = 0; k < 3; k++) out[k] = dot3(f->axes[k], rel);
}

/* A convex polygon: in camera space while clipped, then projected to (column, row, depth); or
 * (band_hull) the outline of a triangle's band, up to four points a corner. */
#define MOST_POINTS 40
typedef struct {
    double p[MOST_POINTS][3];
    int n;
} Polygon;

/* Keep the part of ``poly`` where plane[0] x + plane[1] y + plane[2] z + plane[3] >= 0. */
static void clip(Polygon *poly, const double plane[4]) {
    Polygon out;
    out.n = 0;
    for (int k = 0; k < poly->n; k++) {
        const double *p = poly->p[k], *q = poly->p[(k + 1) % poly->n];
        double dp = plane[0] * p[0] + plane[1] * p[1] + plane[2] * p[2] + plane[3];
        double dq = plane[0] * q[0] + plane[1] * q[1] + plane[2] * q[2] + plane[3];
        if (dp >= 0) memcpy(out.p[out.n++], p, sizeof(out.p[0]));
        if ((dp >= 0) != (dq >= 0)) {
            double s = dp / (dp - dq);
            for (int i = 0; i < 3; i++) out.p[out.n][i] = p[i] + s * (q[i] - p[i]);
            out.n++;
        }
    }
    memcpy(poly->p, out.p, (size_t)out.n * sizeof(out.p[0]));
    poly->n = out.n;
}

/* Clip a triangle (camera coordinates) to what the image may show, ``margin`` pixels wider
 * on each side (``margin`` < 0: to the near plane only), and project it to pixels (each
 * corner's depth kept third). Returns the depth of its nearest point, or 0 when nothing is
 * left. */
static double footprint(const Frame *f, double cam[3][3], double margin, Polygon *poly) {
    poly->n = 3;
    memcpy(poly->p, cam, 9 * sizeof(double));
    double half_w = f->width / 2.0 + margin, half_h = f->height / 2.0 + margin;
    double planes[5][4] = {{1, 0, 0, -NEAR}, {half_w, -f->focal, 0, 0}, {half_w, f->focal, 0, 0},
                           {half_h, 0, -f->focal, 0}, {half_h, 0, f->focal, 0}};
    for (int k = 0; k < (margin < 0 ? 1 : 5) && poly->n > 0; k++) {
        const double *pl = planes[k];
        int cut = 0;
        for (int i = 0; i < 3; i++) cut |= pl[0] * cam[i][0] + pl[1] * cam[i][1] + pl[2] * cam[i][2] + pl[3] < 0;
        if (cut) clip(poly, pl); /* clipping a later plane tests the clipped corners again */
    }
    double nearest = INFINITY;
    for (int k = 0; k < poly->n; k++) {
        double x = greater(poly->p[k][0], NEAR);
        nearest = lesser(nearest, x);
        poly->p[k][0] = f->width / 2.0 - f->focal * poly->p[k][1] / x;
        poly->p[k][1] = f->height / 2.0 - f->focal * poly->p[k][2] / x;
        poly->p[k][2] = x;
    }
    return poly->n > 0 ? nearest : 0.0;
}

/* A polygon's edge for scanning: its rows (low to high) and its column as a line in the row. */
typedef struct {
    double y0, y1, x0, slope;
} Edge;

static int edges_of(const Polygon *poly, Edge *edges) {
    int n = 0;
    for (int k = 0; k < poly->n; k++) {
        const double *p = poly->p[k], *q = poly->p[(k + 1) % poly->n];
        const double *a = p[1] <= q[1] ? p : q, *b = p[1] <= q[1] ? q : p;
        Edge *e = edges + n++;
        e->y0 = a[1], e->y1 = b[1], e->x0 = a[0];
        e->slope = b[1] > a[1] ? (b[0] - a[0]) / (b[1] - a[1]) : 0.0;
        if (b[1] == a[1] && b[0] != a[0]) { /* a level edge: keep both ends as points */
            e->slope = 0.0;
            edges[n] = *e, edges[n].x0 = b[0], n++;
        }
    }
    return n;
}

/* The columns a convex polygon spans between rows ``y0`` and ``y1``: the extremes of its edges'
 * pieces within that slab. Returns 0 if it does not reach the slab. */
static int span(const Edge *edges, int n, double y0, double y1, double *x0, double *x1) {
    double lo = INFINITY, hi = -INFINITY;
    for (int k = 0; k < n; k++) {
        const Edge *e = edges + k;
        double a = greater(y0, e->y0), b = lesser(y1, e->y1);
        if (a > b) continue;
        double xa = e->x0 + (a - e->y0) * e->slope, xb = e->x0 + (b - e->y0) * e->slope;
        lo = lesser(lo, lesser(xa, xb)), hi = greater(hi, greater(xa, xb));
    }
    *x0 = lo, *x1 = hi;
    return lo <= hi;
}

/* The pixels (``box``: first and last column, first and last row) whose centres lie within
 * ``grow`` pixels of the box from columns ``left`` to ``right`` and rows ``top`` to ``bottom``. */
ROUNDED static void box_within(const Frame *f, double left, double right, double top, double bottom, double grow, int box[4]) {
    box[0] = (int)greater(0.0, ceil(greater(-1.0, left - grow - 0.5)));
    box[1] = (int)lesser(f->width - 1.0, floor(lesser(f->width, right + grow - 0.5)));
    box[2] = (int)greater(0.0, ceil(greater(-1.0, top - grow - 0.5)));
    box[3] = (int)lesser(f->height - 1.0, floor(lesser(f->height, bottom + grow - 0.5)));
}

/* The pixels whose centres lie within ``grow`` pixels of the box around ``poly``. */
static void box_of(const Frame *f, const Polygon *poly, double grow, int box[4]) {
    double top = INFINITY, bottom = -INFINITY, left = INFINITY, right = -INFINITY;
    for (int k = 0; k < poly->n; k++) {
        top = lesser(top, poly->p[k][1]), bottom = greater(bottom, poly->p[k][1]);
        left = lesser(left, poly->p[k][0]), right = greater(right, poly->p[k][0]);
    }
    box_within(f, left, right, top, bottom, grow, box);
}

/* Whether the turn a -> b -> c is counter-clockwise (in the image's column and row). */
static int turns_left(const double *a, const double *b, const double *c) {
    return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]) > 0;
}

/* The convex hull of a square around each corner of the projected ``poly`` (a clipped
 * triangle: at most 8 corners), reaching grow + widen * BAND / depth pixels from the corner
 * on each side, its depth the corner's: where the band of every point of the polygon lies.
 * That band, in pixels, is at most SLACK + widen * (BAND / depth + angle) (see
 * raster_triangle; ``angle`` is 0 for a face seen edge-on), and 1 / depth is affine over a
 * projected plane, so each point's square is a blend of the corners' and lies in their hull.
 * One size for the whole polygon, from its nearest depth, can be the whole frame for a face
 * passing by the eye. */
static void band_hull(const Polygon *poly, double grow, double widen, Polygon *hull) {
    double points[4 * 8][2];
    int m = 0;
    for (int k = 0; k < poly->n; k++) {
        double g = grow + widen * BAND / poly->p[k][2];
        for (int corner = 0; corner < 4; corner++, m++) {
            points[m][0] = poly->p[k][0] + (corner & 1 ? g : -g);
            points[m][1] = poly->p[k][1] + (corner & 2 ? g : -g);
        }
    }
    for (int i = 1; i < m; i++) /* by column, then row */
        for (int j = i; j > 0 && (points[j][0] < points[j - 1][0] ||
                                  (points[j][0] == points[j - 1][0] && points[j][1] < points[j - 1][1])); j--) {
            double keep[2] = {points[j][0], points[j][1]};
            memcpy(points[j], points[j - 1], sizeof(keep)), memcpy(points[j - 1], keep, sizeof(keep));
        }
    int n = 0; /* Andrew's monotone chain: the lower side, then the upper */
    for (int pass = 0; pass < 2; pass++) {
        int start = n;
        for (int step = 0; step < m; step++) {
            const double *q = points[pass ? m - 1 - step : step];
            while (n >= start + 2 && !turns_left(hull->p[n - 2], hull->p[n - 1], q)) n--;
            hull->p[n][0] = q[0], hull->p[n][1] = q[1], hull->p[n][2] = 0.0, n++;
        }
        n--; /* the last point starts the other side */
    }
    hull->n = n;
}

#ifdef HAVE_AVX2_PATH
/* The rows ``first`` to ``last`` of spans, four at a time: each lane does span's and spans'
 * IEEE operations in their order (greater and lesser as maximum and minimum, an edge a row
 * does not reach left out by a blend), so the columns are the same. */
__attribute__((target("avx2"))) static void spans_avx2(const Edge *edges, int n, double grow, const int box[4], int *columns) {
    const __m256d half = _mm256_set1_pd(0.5), g = _mm256_set1_pd(grow), four = _mm256_set1_pd(4.0);
    const __m256d left = _mm256_set1_pd(box[0]), right = _mm256_set1_pd(box[1]);
    __m256d row = _mm256_setr_pd(box[2], box[2] + 1.0, box[2] + 2.0, box[2] + 3.0); /* whole numbers: sums exact */
    for (int i = box[2]; i <= box[3]; i += 4, row = _mm256_add_pd(row, four)) {
        __m256d centre = _mm256_add_pd(row, half), y0 = _mm256_sub_pd(centre, g), y1 = _mm256_add_pd(centre, g);
        __m256d lo = _mm256_set1_pd(INFINITY), hi = _mm256_set1_pd(-INFINITY);
        for (int k = 0; k < n; k++) {
            const Edge *e = edges + k;
            const __m256d ey0 = _mm256_set1_pd(e->y0), x0 = _mm256_set1_pd(e->x0), slope = _mm256_set1_pd(e->slope);
            __m256d a = _mm256_max_pd(y0, ey0), b = _mm256_min_pd(y1, _mm256_set1_pd(e->y1));
            __m256d xa = _mm256_add_pd(x0, _mm256_mul_pd(_mm256_sub_pd(a, ey0), slope));
            __m256d xb = _mm256_add_pd(x0, _mm256_mul_pd(_mm256_sub_pd(b, ey0), slope));
            __m256d missed = _mm256_cmp_pd(a, b, _CMP_GT_OQ);
            lo = _mm256_blendv_pd(_mm256_min_pd(lo, _mm256_min_pd(xa, xb)), lo, missed);
            hi = _mm256_blendv_pd(_mm256_max_pd(hi, _mm256_max_pd(xa, xb)), hi, missed);
        }
        int met = _mm256_movemask_pd(_mm256_cmp_pd(lo, hi, _CMP_LE_OQ));
        __m256d first = _mm256_max_pd(left, _mm256_ceil_pd(_mm256_sub_pd(_mm256_sub_pd(lo, g), half)));
        __m256d last = _mm256_min_pd(right, _mm256_floor_pd(_mm256_sub_pd(_mm256_add_pd(hi, g), half)));
        int32_t firsts[4], lasts[4];
        _mm_storeu_si128((__m128i *)firsts, _mm256_cvttpd_epi32(first)), _mm_storeu_si128((__m128i *)lasts, _mm256_cvttpd_epi32(last));
        for (int l = 0; l < 4 && i + l <= box[3]; l++) {
            int *c = columns + 2 * (i + l);
            c[0] = met >> l & 1 ? firsts[l] : 0, c[1] = met >> l & 1 ? lasts[l] : -1;
        }
    }
}
#endif

/* Per row of ``box``, the columns whose pixel centres lie within ``grow`` pixels of ``poly``:
 * ``columns`` gets two entries a row (first > last: none). */
ROUNDED static void spans(const Frame *f, const Polygon *poly, double grow, const int box[4], int *columns) {
    (void)f;
    if ((box[1] - box[0] + 1) * (box[3] - box[2] + 1) <= SMALL) { /* a few pixels: test them all */
        for (int i = box[2]; i <= box[3]; i++) columns[2 * i] = box[0], columns[2 * i + 1] = box[1];
        return;
    }
    Edge edges[2 * MOST_POINTS];
    int n = edges_of(poly, edges);
#ifdef HAVE_AVX2_PATH
    if (simd_on) {
        spans_avx2(edges, n, grow, box, columns);
        return;
    }
#endif
    for (int i = box[2]; i <= box[3]; i++) {
        double x0, x1;
        int *c = columns + 2 * i;
        c[0] = 0, c[1] = -1;
        if (!span(edges, n, i + 0.5 - grow, i + 0.5 + grow, &x0, &x1)) continue;
        c[0] = (int)greater(box[0], ceil(x0 - grow - 0.5));
        c[1] = (int)lesser(box[1], floor(x1 + grow - 0.5));
    }
}

/* Pixels ``first`` to ``last`` of row ``i``, one at a time. A pixel's numerators are its row's
 * start plus the column times the step (not a running sum), so that lanes can do the same. */
static void test_row(const Frame *f, const Setup *s, int i, int first, int last) {
    double det0 = s->det[0] + s->det[2] * i, un0 = s->un[0] + s->un[2] * i, vn0 = s->vn[0] + s->vn[2] * i;
    size_t row = (size_t)i * (size_t)f->width;
    for (int j = first; j <= last; j++)
        test_pixel(f, s, row + j, det0 + s->det[1] * j, un0 + s->un[1] * j, vn0 + s->vn[1] * j);
}

#ifdef HAVE_AVX2_PATH
/* The four 32-bit lanes of a mask of four 64-bit lanes. */
__attribute__((target("avx2"))) static inline __m128i narrow(__m256d mask) {
    __m256i picked = _mm256_permutevar8x32_epi32(_mm256_castpd_si256(mask), _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6));
    return _mm256_castsi256_si128(picked);
}

/* candidate and consider for the pixels ``k`` to ``k + 3`` whose lanes are set in ``keep``,
 * each lane taking consider's branch as a choice between its old and new values. */
__attribute__((target("avx2"))) static inline void consider_lanes(const Best *b, size_t k, __m256d keep, __m256d t, __m256d inv_cos,
                                                                  __m256d edge, int32_t index, double apart) {
    __m256d near = _mm256_and_pd(keep, _mm256_cmp_pd(t, _mm256_set1_pd(NEAR), _CMP_LT_OQ));
    keep = _mm256_andnot_pd(near, keep);
    __m256d margin = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(_mm256_set1_pd(TIE_SLOPE), t), _mm256_set1_pd(TIE_FLOOR)),
                                   _mm256_mul_pd(_mm256_mul_pd(_mm256_set1_pd(TIE_GRAZING), t), inv_cos));
    __m256d reach = _mm256_mul_pd(_mm256_mul_pd(_mm256_set1_pd(apart), inv_cos), _mm256_set1_pd(2.0));
    edge = _mm256_or_pd(edge, _mm256_cmp_pd(reach, margin, _CMP_GT_OQ));
    __m256d bt = _mm256_loadu_pd(b->t + k), bm = _mm256_loadu_pd(b->margin + k);
    __m128i tri = _mm_loadu_si128((const __m128i *)(b->tri + k));
    uint32_t packed;
    memcpy(&packed, b->state + k, 4);
    __m256i state = _mm256_cvtepu8_epi64(_mm_cvtsi32_si128((int)packed)); /* a 64-bit lane each, as the masks */
    __m256d none = _mm256_castsi256_pd(_mm256_cvtepi32_epi64(_mm_cmplt_epi32(tri, _mm_setzero_si128())));
    __m256d m = _mm256_max_pd(margin, bm);
    __m256d fresh = _mm256_and_pd(keep, _mm256_or_pd(none, _mm256_cmp_pd(t, _mm256_sub_pd(bt, m), _CMP_LT_OQ)));
    __m256d tie = _mm256_andnot_pd(fresh, _mm256_and_pd(keep, _mm256_cmp_pd(t, _mm256_add_pd(bt, m), _CMP_LE_OQ)));
    __m256d move = _mm256_or_pd(fresh, _mm256_and_pd(tie, _mm256_cmp_pd(t, bt, _CMP_LT_OQ)));
    _mm256_storeu_pd(b->t + k, _mm256_blendv_pd(bt, t, move));
    _mm256_storeu_pd(b->margin + k, _mm256_blendv_pd(bm, margin, move));
    _mm_storeu_si128((__m128i *)(b->tri + k), _mm_blendv_epi8(tri, _mm_set1_epi32(index), narrow(move)));
    __m256i forced = _mm256_set1_epi64x(FORCED), edges = _mm256_and_si256(_mm256_castpd_si256(edge), _mm256_set1_epi64x(EDGE));
    __m256i renewed = _mm256_or_si256(_mm256_and_si256(state, forced), edges);
    state = _mm256_blendv_epi8(state, _mm256_or_si256(state, forced), _mm256_castpd_si256(near));
    state = _mm256_blendv_epi8(state, renewed, _mm256_castpd_si256(fresh));
    state = _mm256_blendv_epi8(state, _mm256_or_si256(state, _mm256_set1_epi64x(TIE)), _mm256_castpd_si256(tie));
    /* each lane's low byte to bytes 0-3 */
    __m128i low = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(state, _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6)));
    packed = (uint32_t)_mm_cvtsi128_si32(_mm_shuffle_epi8(low, _mm_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1)));
    memcpy(b->state + k, &packed, 4);
}

/* test_row four pixels at a time: each lane does test_pixel's IEEE operations in its order
 * (max and min as greater and lesser: the second operand unless the first is larger or
 * smaller; comparisons that hold for NaN where test_pixel's rejections do not), so the
 * candidates kept are the same, and consider_lanes keeps them as consider does. */
__attribute__((target("avx2"))) static inline void test_row_avx2(const Frame *f, const Setup *s, int i, int first, int last) {
    double det0 = s->det[0] + s->det[2] * i, un0 = s->un[0] + s->un[2] * i, vn0 = s->vn[0] + s->vn[2] * i;
    size_t row = (size_t)i * (size_t)f->width;
    const __m256d d0 = _mm256_set1_pd(det0), u0 = _mm256_set1_pd(un0), v0 = _mm256_set1_pd(vn0);
    const __m256d d1 = _mm256_set1_pd(s->det[1]), u1 = _mm256_set1_pd(s->un[1]), v1 = _mm256_set1_pd(s->vn[1]);
    const __m256d zero = _mm256_setzero_pd(), t0 = _mm256_set1_pd(s->t0), floor = _mm256_set1_pd(TIE_FLOOR);
    const __m256d slope = _mm256_set1_pd(s->far_slope), band0 = _mm256_set1_pd(BAND), band1 = _mm256_set1_pd(s->band_far);
    const __m256d r0 = _mm256_set1_pd(s->reach[0]), r1 = _mm256_set1_pd(s->reach[1]), r2 = _mm256_set1_pd(s->reach[2]);
    const __m256d spread = _mm256_set1_pd(s->spread), sign = _mm256_set1_pd(-0.0);
    const __m256d end = _mm256_set1_pd(last), four = _mm256_set1_pd(4.0);
    __m256d col = _mm256_setr_pd(first, first + 1.0, first + 2.0, first + 3.0); /* whole numbers: sums exact */
    for (int j = first; j <= last; j += 4, col = _mm256_add_pd(col, four)) { /* the last group may pass the row's end: see Scratch */
        size_t k = row + j;
        __m256d det = _mm256_add_pd(d0, _mm256_mul_pd(d1, col));
        __m256d bt = _mm256_loadu_pd(f->best.t + k), bm = _mm256_loadu_pd(f->best.margin + k);
        __m256d far = _mm256_max_pd(_mm256_add_pd(bt, bm), _mm256_mul_pd(_mm256_add_pd(bt, floor), slope));
        __m256d keep = _mm256_and_pd(_mm256_cmp_pd(det, zero, _CMP_NLE_UQ), _mm256_cmp_pd(t0, _mm256_mul_pd(far, det), _CMP_NGT_UQ));
        keep = _mm256_and_pd(keep, _mm256_cmp_pd(col, end, _CMP_LE_OQ));
        if (!_mm256_movemask_pd(keep)) continue;
        __m256d un = _mm256_add_pd(u0, _mm256_mul_pd(u1, col)), vn = _mm256_add_pd(v0, _mm256_mul_pd(v1, col));
        __m256d band = _mm256_add_pd(_mm256_mul_pd(band0, det), band1);
        __m256d wn = _mm256_sub_pd(_mm256_sub_pd(det, un), vn);
        __m256d gap = _mm256_min_pd(_mm256_min_pd(_mm256_mul_pd(un, r0), _mm256_mul_pd(vn, r1)), _mm256_mul_pd(wn, r2));
        keep = _mm256_and_pd(keep, _mm256_cmp_pd(gap, _mm256_xor_pd(band, sign), _CMP_NLT_UQ));
        int bits = _mm256_movemask_pd(keep);
        if (!bits) continue;
        __m256d t = _mm256_div_pd(t0, det), inv_cos = _mm256_div_pd(spread, det);
        consider_lanes(&f->best, k, keep, t, inv_cos, _mm256_cmp_pd(gap, band, _CMP_LE_OQ), s->index, s->apart);
    }
}

/* test_row_avx2 over the rows of ``box`` (one call: the triangle's constants set up once). */
__attribute__((target("avx2"))) static void test_rows_avx2(const Frame *f, const Setup *s, const int box[4], const int *columns) {
    for (int i = box[2]; i <= box[3]; i++) test_row_avx2(f, s, i, columns[2 * i], columns[2 * i + 1]);
}
#endif

static void test_pixels(const Frame *f, const Setup *s, const int box[4], const int *columns) {
#ifdef HAVE_AVX2_PATH
    if (simd_on) {
        test_rows_avx2(f, s, box, columns);
        return;
    }
#endif
    for (int i = box[2]; i <= box[3]; i++) test_row(f, s, i, columns[2 * i], columns[2 * i + 1]);
}

static void force_pixels(const Frame *f, const int box[4], const int *columns) {
    for (int i = box[2]; i <= box[3]; i++)
        for (int j = columns[2 * i]; j <= columns[2 * i + 1]; j++) f->best.state[(size_t)i * f->width + j] |= FORCED;
}

/* The linear form, over pixel (column, row), of ``v . d`` for the pixel's ray ``d``. */
static void linear(const Frame *f, const double v[3], double sign, double out[3]) {
    double forward = dot3(v, f->axes[0]), left = dot3(v, f->axes[1]), up = dot3(v, f->axes[2]);
    /* d = forward + left * (w/2 - col - 0.5) / focal + up * (h/2 - row - 0.5) / focal */
    out[0] = sign * (forward + left * (f->width / 2.0 - 0.5) / f->focal + up * (f->height / 2.0 - 0.5) / f->focal);
    out[1] = -sign * left / f->focal;
    out[2] = -sign * up / f->focal;
}

#ifdef HAVE_AVX2_PATH
/* linear for the three vectors ``v`` at once, one a lane (linear's operations in each), into
 * ``out``. */
__attribute__((target("avx2"))) static void linear_three(const Frame *f, const double *const v[3], double sign, double *const out[3]) {
    __m256d c[3], along[3];
    for (int i = 0; i < 3; i++) c[i] = _mm256_setr_pd(v[0][i], v[1][i], v[2][i], 0.0);
    for (int k = 0; k < 3; k++) {
        const double *a = f->axes[k];
        along[k] = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(c[0], _mm256_set1_pd(a[0])), _mm256_mul_pd(c[1], _mm256_set1_pd(a[1]))),
                                 _mm256_mul_pd(c[2], _mm256_set1_pd(a[2])));
    }
    const __m256d focal = _mm256_set1_pd(f->focal), plus = _mm256_set1_pd(sign), minus = _mm256_set1_pd(-sign);
    __m256d across = _mm256_div_pd(_mm256_mul_pd(along[1], _mm256_set1_pd(f->width / 2.0 - 0.5)), focal);
    __m256d down = _mm256_div_pd(_mm256_mul_pd(along[2], _mm256_set1_pd(f->height / 2.0 - 0.5)), focal);
    double terms[3][4];
    _mm256_storeu_pd(terms[0], _mm256_mul_pd(plus, _mm256_add_pd(_mm256_add_pd(along[0], across), down)));
    _mm256_storeu_pd(terms[1], _mm256_div_pd(_mm256_mul_pd(minus, along[1]), focal));
    _mm256_storeu_pd(terms[2], _mm256_div_pd(_mm256_mul_pd(minus, along[2]), focal));
    for (int l = 0; l < 3; l++)
        for (int k = 0; k < 3; k++) out[l][k] = terms[k][l];
}
#endif

/* Whether the triangle may come within ``distance`` of the eye: its plane (at ``h``) and its
 * box, grown by that, do. */
static int within(const Frame *f, const float *c, double h, double distance) {
    if (h > distance) return 0;
    for (int i = 0; i < 3; i++) {
        double lo = lesser(lesser(c[i], c[3 + i]), c[6 + i]), hi = greater(greater(c[i], c[3 + i]), c[6 + i]);
        if (f->eye[i] < lo - distance || f->eye[i] > hi + distance) return 0;
    }
    return 1;
}

/* Whether all three corners lie outside one side of the view (``margin`` pixels wider). */
static int outside(const Frame *f, double cam[3][3]) {
    double kw = f->slope_w, kh = f->slope_h;
    int out[5] = {1, 1, 1, 1, 1};
    for (int k = 0; k < 3; k++) {
        double x = cam[k][0], y = cam[k][1], z = cam[k][2];
        out[0] &= x < NEAR, out[1] &= y > kw * x, out[2] &= -y > kw * x, out[3] &= z > kh * x, out[4] &= -z > kh * x;
    }
    return out[0] | out[1] | out[2] | out[3] | out[4];
}

#define NO_AREA 0
#define EDGE_ON 1
#define READY 2

/* Fill the shape part of ``s`` (edges, area, scale, band angle); return NO_AREA, EDGE_ON or READY. */
static int shape(const Frame *f, const float *c, double cam[3][3], Setup *s) {
    double n[3], far2 = 0.0;
    for (int i = 0; i < 3; i++) {
        s->e1[i] = (double)c[3 + i] - c[i], s->e2[i] = (double)c[6 + i] - c[i];
        s->sv[i] = f->eye[i] - c[i];
    }
    cross3(s->e1, s->e2, n);
    s->twice_area = sqrt(dot3(n, n));
    if (s->twice_area == 0.0) return NO_AREA;
    s->h = fabs(dot3(n, s->sv)) / s->twice_area;
    for (int k = 0; k < 3; k++) {
        const float *p = c + 3 * k;
        far2 = greater(far2, greater(dot3(cam[k], cam[k]), (double)p[0] * p[0] + (double)p[1] * p[1] + (double)p[2] * p[2]));
    }
    s->scale = sqrt(far2); /* how far the corners are from the eye, and from the world's origin */
    s->angle = 0.0;
    if (s->h < GRAZING * s->scale) return EDGE_ON;
    s->angle = BAND_SLOPE * s->scale / s->h;
    return READY;
}

/* Fill the linear forms of ``s`` for the pixel loop (a READY triangle, its edges from shape). */
static void forms(const Frame *f, const double *reach, Setup *s) {
    double n2[3], un[3], q[3];
    cross3(s->e2, s->e1, n2);
    cross3(s->e2, s->sv, un);
    cross3(s->sv, s->e1, q);
    s->t0 = dot3(s->e2, q);
    double sign = s->t0 < 0 ? -1.0 : 1.0;
    s->t0 *= sign;
#ifdef HAVE_AVX2_PATH
    if (simd_on)
        linear_three(f, (const double *const[3]){n2, un, q}, sign, (double *const[3]){s->det, s->un, s->vn});
    else
#endif
        linear(f, n2, sign, s->det), linear(f, un, sign, s->un), linear(f, q, sign, s->vn);
    for (int k = 0; k < 3; k++) s->reach[k] = reach[k];
    s->apart = f->apart[s->index];
    s->far_slope = 1.0 / (1.0 - TIE_SLOPE - TIE_GRAZING * s->scale / s->h);
    /* The ray's length: the longest of the frame's stands for all (a wider band is safe). */
    double norm = f->reach_max;
    s->band_far = BAND_SLOPE * s->scale * norm * s->twice_area, s->spread = norm * s->twice_area;
}

/* Whether pixel ``k`` already holds a hit nearer than ``depth`` by more than any tie margin. */
static inline int behind(const Best *b, size_t k, double depth) {
    return b->tri[k] >= 0 && !(depth <= greater(b->t[k] + b->margin[k], (b->t[k] + TIE_FLOOR) * FAR_SLOPE));
}

#ifdef HAVE_AVX2_PATH
/* refresh's largest bound of a whole tile (TILE columns), four pixels at a time (the largest
 * of the same values, so the same number). */
__attribute__((target("avx2"))) static double tile_far_avx2(const Frame *f, int row, int col, int last_i) {
    const Best *b = &f->best;
    const __m256d floor = _mm256_set1_pd(TIE_FLOOR), slope = _mm256_set1_pd(FAR_SLOPE);
    __m256d most = _mm256_set1_pd(-INFINITY);
    for (int i = row * TILE; i < last_i; i++) {
        size_t k = (size_t)i * f->width + (size_t)col * TILE;
        __m256i tri = _mm256_loadu_si256((const __m256i *)(b->tri + k));
        if (_mm256_movemask_ps(_mm256_castsi256_ps(tri))) return INFINITY; /* a pixel without a hit */
        for (int half = 0; half < TILE; half += 4) {
            __m256d t = _mm256_loadu_pd(b->t + k + half), m = _mm256_loadu_pd(b->margin + k + half);
            __m256d far = _mm256_max_pd(_mm256_add_pd(t, m), _mm256_mul_pd(_mm256_add_pd(t, floor), slope));
            most = _mm256_max_pd(far, most);
        }
    }
    double lanes[4];
    _mm256_storeu_pd(lanes, most);
    return greater(greater(lanes[0], lanes[1]), greater(lanes[2], lanes[3]));
}
#endif

/* Recompute the far depth of tile (``row``, ``col``) from its pixels: the largest of behind's
 * bounds, or +inf if a pixel has no hit. */
static void refresh(const Frame *f, int row, int col) {
    size_t at = (size_t)row * f->tiles.across + col;
    f->tiles.stale[at] = 0;
#ifdef HAVE_AVX2_PATH
    if (simd_on && (col + 1) * TILE <= f->width) {
        f->tiles.far[at] = tile_far_avx2(f, row, col, lesser(f->height, (row + 1) * TILE));
        return;
    }
#endif
    double most = -INFINITY;
    int last_i = lesser(f->height, (row + 1) * TILE), last_j = lesser(f->width, (col + 1) * TILE);
    for (int i = row * TILE; i < last_i && most < INFINITY; i++)
        for (int j = col * TILE; j < last_j; j++) {
            size_t k = (size_t)i * f->width + j;
            const Best *b = &f->best;
            if (b->tri[k] < 0) {
                most = INFINITY;
                break;
            }
            double far = greater(b->t[k] + b->margin[k], (b->t[k] + TIE_FLOOR) * FAR_SLOPE);
            if (far > most) most = far;
        }
    f->tiles.far[at] = most;
}

/* Whether every pixel of ``box`` (first and last column, first and last row) is behind
 * ``depth``: a tile whose far depth is nearer is so whole; the others are looked at pixel by
 * pixel (the same answer as looking at every pixel). */
static int covered(const Frame *f, const int box[4], double depth) {
    if (box[0] > box[1] || box[2] > box[3]) return 1; /* no pixel (and its rows may lie outside) */
    for (int row = box[2] / TILE; row <= box[3] / TILE; row++)
        for (int col = box[0] / TILE; col <= box[1] / TILE; col++) {
            size_t at = (size_t)row * f->tiles.across + col;
            if (f->tiles.stale[at]) refresh(f, row, col);
            if (depth > f->tiles.far[at]) continue;
            int last_i = lesser(box[3], row * TILE + TILE - 1), last_j = lesser(box[1], col * TILE + TILE - 1);
            for (int i = greater(box[2], row * TILE); i <= last_i; i++)
                for (int j = greater(box[0], col * TILE); j <= last_j; j++)
                    if (!behind(&f->best, (size_t)i * f->width + j, depth)) return 0;
        }
    return 1;
}

/* Mark the tiles of ``box`` as changed. */
static void touch(const Frame *f, const int box[4]) {
    if (box[0] > box[1] || box[2] > box[3]) return;
    for (int row = box[2] / TILE; row <= box[3] / TILE; row++)
        memset(f->tiles.stale + (size_t)row * f->tiles.across + box[0] / TILE, 1, (size_t)(box[1] / TILE - box[0] / TILE + 1));
}

/* Whether every pixel of ``box`` already holds a hit nearer than ``depth`` by more than any tie
 * margin: the triangle could then change no pixel but by forcing it (when seen edge-on), which
 * would only have its ray cast to find that nearer hit. With the tiles this pays at any size
 * (before them, only boxes of 64 pixels or fewer were looked at). */
static int hidden_box(const Frame *f, const int box[4], double depth) { return covered(f, box, depth); }

/* Whether a triangle ahead of the eye (every corner at least 2 NEAR) surely changes nothing,
 * told before it is clipped: its corners' pixel box, grown by at least raster_triangle's
 * ``grow``, holds no pixel centre or is hidden (``covered``) at a depth nearer than any of its
 * points less ``metres``. Its clipped outline lies within its corners' hull and ahead of
 * their nearest depth, up to rounding that ``ROUNDING`` covers many times over, so that box
 * and depth bound raster_triangle's and this skips only triangles it would drop. */
#define ROUNDING 1e-9
static int skipped(const Frame *f, double cam[3][3], double widen, double angle, double metres) {
    double left = INFINITY, right = -INFINITY, top = INFINITY, bottom = -INFINITY, nearest = INFINITY;
    for (int k = 0; k < 3; k++) {
        double x = cam[k][0];
        if (!(x >= 2.0 * NEAR)) return 0;
        double col = f->width / 2.0 - f->focal * cam[k][1] / x, row = f->height / 2.0 - f->focal * cam[k][2] / x;
        left = lesser(left, col), right = greater(right, col), top = lesser(top, row), bottom = greater(bottom, row);
        nearest = lesser(nearest, x);
    }
    nearest *= 1.0 - ROUNDING;
    double size = greater(greater(fabs(left), fabs(right)), greater(fabs(top), fabs(bottom)));
    double grow = (SLACK + widen * (BAND / nearest + angle)) * (1.0 + ROUNDING) + ROUNDING * (1.0 + size);
    int box[4];
    box_within(f, left, right, top, bottom, grow, box);
    return covered(f, box, nearest - metres * (1.0 + ROUNDING));
}

/* Rasterise one triangle not outside the view, its corners ``cam`` in camera coordinates;
 * ``check``: first see whether it is surely ``skipped``. */
static void raster_shaped(const Frame *f, const float *c, double cam[3][3], const double *reach, Setup *s, int state, int check,
                          const Polygon *whole, const int *shown);

/* Whether no plane of footprint's cuts the triangle ``cam`` (every value finite); if so, its
 * projection into ``poly``, with footprint's operations. */
static int uncut(const Frame *f, double cam[3][3], Polygon *poly) {
    double half_w = f->width / 2.0 + MARGIN, half_h = f->height / 2.0 + MARGIN;
    for (int k = 0; k < 3; k++) {
        double x = cam[k][0], y = cam[k][1], z = cam[k][2];
        if (!(fabs(x) < INFINITY && fabs(y) < INFINITY && fabs(z) < INFINITY && x >= NEAR)) return 0;
        double wide = half_w * x, lateral = f->focal * y, high = half_h * x, upward = f->focal * z;
        if (!(wide - lateral >= 0 && wide + lateral >= 0 && high - upward >= 0 && high + upward >= 0)) return 0;
    }
    poly->n = 3;
    for (int k = 0; k < 3; k++) {
        double x = cam[k][0];
        poly->p[k][0] = f->width / 2.0 - f->focal * cam[k][1] / x;
        poly->p[k][1] = f->height / 2.0 - f->focal * cam[k][2] / x;
        poly->p[k][2] = x;
    }
    return 1;
}

static void raster_seen(const Frame *f, const float *c, double cam[3][3], const double *reach, int32_t index, int check) {
    Setup s;
    s.index = index;
    int state = shape(f, c, cam, &s);
    if (state == NO_AREA) return;
    Polygon whole;
    raster_shaped(f, c, cam, reach, &s, state, check, uncut(f, cam, &whole) ? &whole : NULL, NULL);
}

/* raster_seen from its shape on: ``s`` and ``state`` as shape gives them (forms completes the
 * caller's ``s`` in place: it is that triangle's alone); ``whole``, when no
 * plane of footprint's cuts the triangle, its projection as footprint gives it (else NULL);
 * ``shown``, with ``whole``, its box as box_of gives it, known not hidden (else NULL). */
static void raster_shaped(const Frame *f, const float *c, double cam[3][3], const double *reach, Setup *s, int state, int check,
                          const Polygon *whole, const int *shown) {
    /* The band, as an angle seen from the eye: BAND / r + BAND_SLOPE * scale / h (the cosine
     * at distance r is h / r), in pixels at most focal * reach * (1 + reach) times that.
     * Clipping to the view MARGIN pixels wider is safe where the band stays under MARGIN / 2
     * pixels: beyond a safe depth, so for a triangle that keeps twice as far from the eye
     * (with room for the band). Else clip to the near plane only. */
    Polygon poly;
    double widen = f->focal * f->reach_max * (1.0 + f->reach_max), metres = 0.0;
    if (state == READY) metres = BAND + BAND_SLOPE * s->scale * s->scale / s->h;
    if (check && !whole && skipped(f, cam, widen, s->angle, metres)) return; /* whole: box_of's own test is as cheap */
    double nearest = INFINITY;
    if (whole) { /* what clipping would leave: all of it */
        poly.n = 3;
        for (int k = 0; k < 3; k++) memcpy(poly.p[k], whole->p[k], sizeof(poly.p[k])), nearest = lesser(nearest, poly.p[k][2]);
    } else {
        double room = MARGIN / 2 - SLACK - widen * s->angle, safe = room > 0 ? widen * BAND / room : INFINITY;
        int wide = room <= 0 || within(f, c, s->h, 2.0 * safe * f->reach_max + metres);
        nearest = footprint(f, cam, wide ? -1.0 : MARGIN, &poly);
    }
    if (nearest == 0.0) return;
    double grow = SLACK + widen * (BAND / nearest + s->angle);
    int box[4];
    if (shown)
        memcpy(box, shown, sizeof(box));
    else {
        box_of(f, &poly, grow, box);
        /* A candidate just outside the outline may lie nearer than the outline, by the band. */
        if (hidden_box(f, box, nearest - metres)) return;
    }
    if (state == EDGE_ON) { /* force the pixels of its band (s->angle is 0 here) */
        if (poly.n > 8) { /* never for a clipped triangle; band_hull holds 8 corners: the box */
            spans(f, &poly, grow, box, f->columns);
            force_pixels(f, box, f->columns);
            return;
        }
        Polygon hull;
        band_hull(&poly, SLACK, widen, &hull);
        box_of(f, &hull, 0.0, box);
        spans(f, &hull, 0.0, box, f->columns);
        force_pixels(f, box, f->columns);
        return;
    }
    spans(f, &poly, grow, box, f->columns);
    forms(f, reach, s);
    test_pixels(f, s, box, f->columns);
    f->work->tested++;
    touch(f, box);
    return;
}

/* Whether a triangle comes so near the eye that the whole frame must be cast instead. */
static int too_near(const Frame *f, const float *c) {
    double e1[3] = {(double)c[3] - c[0], (double)c[4] - c[1], (double)c[5] - c[2]}, n[3];
    double e2[3] = {(double)c[6] - c[0], (double)c[7] - c[1], (double)c[8] - c[2]};
    double sv[3] = {f->eye[0] - c[0], f->eye[1] - c[1], f->eye[2] - c[2]};
    cross3(e1, e2, n);
    double area = sqrt(dot3(n, n));
    return area > 0.0 && within(f, c, fabs(dot3(n, sv)) / area, f->close);
}

/* Rasterise one triangle (``near``: its chunk is near the eye). Returns 0 when it comes so
 * near the eye that the whole frame must be cast instead. */
static int raster_triangle(const Frame *f, const float *c, const double *reach, int32_t index, int near) {
    double cam[3][3];
    if (near && too_near(f, c)) return 0;
    for (int k = 0; k < 3; k++) to_camera(f, c + 3 * k, cam[k]);
    if (!outside(f, cam)) raster_seen(f, c, cam, reach, index, !near);
    return 1;
}

#ifdef HAVE_AVX2_PATH
/* Coordinate ``q`` (of nine) of the four triangles ``c``, as doubles. */
__attribute__((target("avx2"))) static inline __m256d coordinate_lanes(const float *const c[4], int q) {
    return _mm256_cvtps_pd(_mm_setr_ps(c[0][q], c[1][q], c[2][q], c[3][q]));
}

/* box_within's first and last pixel along one axis of ``size`` pixels, from the lanes' lowest
 * and highest corner (``lo``, ``hi``) grown by ``grow``; returns whether that holds none
 * (false where a value is NaN). ``ends`` are box_within's, where no value is NaN. */
__attribute__((target("avx2"))) static inline __m256d pixel_range(__m256d lo, __m256d hi, __m256d grow, double size, __m128i ends[2]) {
    const __m256d half = _mm256_set1_pd(0.5), zero = _mm256_setzero_pd(), most = _mm256_set1_pd(size - 1.0);
    __m256d first = _mm256_ceil_pd(_mm256_sub_pd(_mm256_sub_pd(lo, grow), half));
    __m256d last = _mm256_floor_pd(_mm256_sub_pd(_mm256_add_pd(hi, grow), half));
    __m256d empty = _mm256_or_pd(_mm256_cmp_pd(first, last, _CMP_GT_OQ), _mm256_cmp_pd(last, zero, _CMP_LT_OQ));
    empty = _mm256_or_pd(empty, _mm256_cmp_pd(first, most, _CMP_GT_OQ));
    ends[0] = _mm256_cvttpd_epi32(_mm256_max_pd(first, zero)), ends[1] = _mm256_cvttpd_epi32(_mm256_min_pd(last, most));
    return empty;
}

/* box_within's first and last pixel along one axis of ``size`` pixels (``ends``), from the
 * lanes' lowest and highest corner, with its operations (greater and lesser as maximum and
 * minimum: the second operand unless the first is larger or smaller). */
__attribute__((target("avx2"))) static inline void own_box(__m256d lo, __m256d hi, __m256d grow, double size, int32_t ends[2][4]) {
    const __m256d half = _mm256_set1_pd(0.5);
    __m256d first = _mm256_sub_pd(_mm256_sub_pd(lo, grow), half), last = _mm256_sub_pd(_mm256_add_pd(hi, grow), half);
    first = _mm256_max_pd(_mm256_setzero_pd(), _mm256_ceil_pd(_mm256_max_pd(_mm256_set1_pd(-1.0), first)));
    last = _mm256_min_pd(_mm256_set1_pd(size - 1.0), _mm256_floor_pd(_mm256_min_pd(_mm256_set1_pd(size), last)));
    _mm_storeu_si128((__m128i *)ends[0], _mm256_cvttpd_epi32(first)), _mm_storeu_si128((__m128i *)ends[1], _mm256_cvttpd_epi32(last));
}

/* The lanes of raster_four: each triangle's camera coordinates, shape's values and
 * footprint's projection (column, row) of its corners, to be read one lane at a time. */
typedef struct {
    double cam[3][3][4], e1[3][4], e2[3][4], sv[3][4], area[4], h[4], scale[4], projected[3][2][4], depth[4], own_depth[4];
    int32_t box[4][4], own[4][4]; /* own: box_of's box with raster_shaped's grow */
} FourLanes;

/* The triangles ``members[0]`` to ``members[count - 1]`` (``count`` 1 to 4) of a chunk, none too
 * near the eye (too_near), four at a time: their camera coordinates and shape's values (each
 * lane doing to_camera's and shape's operations in their order, so the same bits); those
 * outside the view (outside's tests) or without area dropped at once, and those surely
 * covering no pixel centre (skipped's box, bounded as there). Where no plane of footprint's
 * cuts a triangle, its projection, box and depth are raster_shaped's own (its operations), so
 * its hidden test is asked here, once; elsewhere skipped's bounds stand in. raster_shaped
 * takes the others one by one from there; a lane with a value not finite goes to raster_seen. */
__attribute__((target("avx2"))) static void raster_four(const Frame *f, const float *corners, const double *reach, const int32_t *members, int count) {
    const float *c[4];
    for (int l = 0; l < 4; l++) c[l] = corners + 9 * (size_t)members[l < count ? l : count - 1];
    const __m256d sign = _mm256_set1_pd(-0.0), kw = _mm256_set1_pd(f->slope_w), kh = _mm256_set1_pd(f->slope_h);
    const __m256d all = _mm256_castsi256_pd(_mm256_set1_epi64x(-1)), zero = _mm256_setzero_pd(), far = _mm256_set1_pd(INFINITY);
    FourLanes L;
    __m256d cam[3][3], world[9], clean = all; /* clean: every value finite */
    for (int q = 0; q < 9; q++) world[q] = coordinate_lanes(c, q);
    for (int k = 0; k < 3; k++) {
        __m256d rel[3];
        for (int i = 0; i < 3; i++) rel[i] = _mm256_sub_pd(world[3 * k + i], _mm256_set1_pd(f->eye[i]));
        for (int j = 0; j < 3; j++) {
            const double *a = f->axes[j];
            cam[k][j] = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(_mm256_set1_pd(a[0]), rel[0]), _mm256_mul_pd(_mm256_set1_pd(a[1]), rel[1])),
                                      _mm256_mul_pd(_mm256_set1_pd(a[2]), rel[2]));
            clean = _mm256_and_pd(clean, _mm256_cmp_pd(_mm256_andnot_pd(sign, cam[k][j]), far, _CMP_LT_OQ));
            _mm256_storeu_pd(L.cam[k][j], cam[k][j]);
        }
    }
    __m256d out[5] = {all, all, all, all, all}, front = all, whole = all, nearest = far, far2 = zero;
    __m256d lo[2] = {far, far}, hi[2] = {_mm256_set1_pd(-INFINITY), _mm256_set1_pd(-INFINITY)};
    const double centre[2] = {f->width / 2.0, f->height / 2.0}, half[2] = {f->width / 2.0 + MARGIN, f->height / 2.0 + MARGIN};
    for (int k = 0; k < 3; k++) {
        __m256d x = cam[k][0], y = cam[k][1], z = cam[k][2], wx = _mm256_mul_pd(kw, x), hx = _mm256_mul_pd(kh, x);
        out[0] = _mm256_and_pd(out[0], _mm256_cmp_pd(x, _mm256_set1_pd(NEAR), _CMP_LT_OQ));
        out[1] = _mm256_and_pd(out[1], _mm256_cmp_pd(y, wx, _CMP_GT_OQ));
        out[2] = _mm256_and_pd(out[2], _mm256_cmp_pd(_mm256_xor_pd(y, sign), wx, _CMP_GT_OQ));
        out[3] = _mm256_and_pd(out[3], _mm256_cmp_pd(z, hx, _CMP_GT_OQ));
        out[4] = _mm256_and_pd(out[4], _mm256_cmp_pd(_mm256_xor_pd(z, sign), hx, _CMP_GT_OQ));
        front = _mm256_and_pd(front, _mm256_cmp_pd(x, _mm256_set1_pd(2.0 * NEAR), _CMP_GE_OQ));
        whole = _mm256_and_pd(whole, _mm256_cmp_pd(x, _mm256_set1_pd(NEAR), _CMP_GE_OQ)); /* footprint's near plane */
        nearest = _mm256_min_pd(nearest, x);
        for (int a = 0; a < 2; a++) { /* column (from y), then row (from z): footprint's sides and projection */
            __m256d lateral = _mm256_mul_pd(_mm256_set1_pd(f->focal), cam[k][1 + a]), side = _mm256_mul_pd(_mm256_set1_pd(half[a]), x);
            whole = _mm256_and_pd(whole, _mm256_cmp_pd(_mm256_sub_pd(side, lateral), zero, _CMP_GE_OQ));
            whole = _mm256_and_pd(whole, _mm256_cmp_pd(_mm256_add_pd(side, lateral), zero, _CMP_GE_OQ));
            __m256d p = _mm256_sub_pd(_mm256_set1_pd(centre[a]), _mm256_div_pd(lateral, x));
            _mm256_storeu_pd(L.projected[k][a], p);
            lo[a] = _mm256_min_pd(lo[a], p), hi[a] = _mm256_max_pd(hi[a], p);
        }
        __m256d d = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(x, x), _mm256_mul_pd(y, y)), _mm256_mul_pd(z, z));
        __m256d o = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(world[3 * k], world[3 * k]), _mm256_mul_pd(world[3 * k + 1], world[3 * k + 1])),
                                  _mm256_mul_pd(world[3 * k + 2], world[3 * k + 2]));
        far2 = _mm256_max_pd(far2, _mm256_max_pd(d, o));
    }
    __m256d drop = _mm256_or_pd(_mm256_or_pd(out[0], out[1]), _mm256_or_pd(_mm256_or_pd(out[2], out[3]), out[4]));
    /* shape: the edges, the eye from a, the normal n, twice the area |n|, h = |n . sv| / |n| */
    __m256d e1[3], e2[3], sv[3], n[3];
    for (int i = 0; i < 3; i++) {
        e1[i] = _mm256_sub_pd(world[3 + i], world[i]), e2[i] = _mm256_sub_pd(world[6 + i], world[i]);
        sv[i] = _mm256_sub_pd(_mm256_set1_pd(f->eye[i]), world[i]);
        _mm256_storeu_pd(L.e1[i], e1[i]), _mm256_storeu_pd(L.e2[i], e2[i]), _mm256_storeu_pd(L.sv[i], sv[i]);
    }
    for (int i = 0; i < 3; i++) {
        int j = (i + 1) % 3, m = (i + 2) % 3;
        n[i] = _mm256_sub_pd(_mm256_mul_pd(e1[j], e2[m]), _mm256_mul_pd(e1[m], e2[j]));
    }
    __m256d area = _mm256_sqrt_pd(_mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(n[0], n[0]), _mm256_mul_pd(n[1], n[1])), _mm256_mul_pd(n[2], n[2])));
    __m256d hn = _mm256_andnot_pd(sign, _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(n[0], sv[0]), _mm256_mul_pd(n[1], sv[1])), _mm256_mul_pd(n[2], sv[2])));
    __m256d h = _mm256_div_pd(hn, area), scale = _mm256_sqrt_pd(far2);
    _mm256_storeu_pd(L.area, area), _mm256_storeu_pd(L.h, h), _mm256_storeu_pd(L.scale, scale);
    /* skipped's box and depth, with the band's angle of a face not edge-on (the larger) */
    __m256d angle = _mm256_div_pd(_mm256_mul_pd(_mm256_set1_pd(BAND_SLOPE), scale), h);
    const __m256d widen = _mm256_set1_pd(f->focal * f->reach_max * (1.0 + f->reach_max)), wide = _mm256_set1_pd(1.0 + ROUNDING);
    __m256d least = _mm256_mul_pd(nearest, _mm256_set1_pd(1.0 - ROUNDING));
    __m256d size = _mm256_max_pd(_mm256_max_pd(_mm256_andnot_pd(sign, lo[0]), _mm256_andnot_pd(sign, hi[0])),
                                 _mm256_max_pd(_mm256_andnot_pd(sign, lo[1]), _mm256_andnot_pd(sign, hi[1])));
    __m256d band = _mm256_add_pd(_mm256_div_pd(_mm256_set1_pd(BAND), least), _mm256_mul_pd(angle, wide));
    __m256d grow = _mm256_add_pd(_mm256_mul_pd(_mm256_add_pd(_mm256_set1_pd(SLACK), _mm256_mul_pd(widen, band)), wide),
                                 _mm256_mul_pd(_mm256_set1_pd(ROUNDING), _mm256_add_pd(_mm256_set1_pd(1.0), size)));
    __m128i ends[4];
    __m256d empty = _mm256_or_pd(pixel_range(lo[0], hi[0], grow, f->width, ends), pixel_range(lo[1], hi[1], grow, f->height, ends + 2));
    /* Where nothing cuts it, raster_shaped's own box and depth, with its operations */
    __m256d edge_on = _mm256_cmp_pd(h, _mm256_mul_pd(_mm256_set1_pd(GRAZING), scale), _CMP_LT_OQ);
    __m256d own_grow = _mm256_add_pd(_mm256_set1_pd(SLACK), _mm256_mul_pd(widen, _mm256_add_pd(_mm256_div_pd(_mm256_set1_pd(BAND), nearest),
                                                                                                 _mm256_andnot_pd(edge_on, angle))));
    own_box(lo[0], hi[0], own_grow, f->width, L.own), own_box(lo[1], hi[1], own_grow, f->height, L.own + 2);
    drop = _mm256_or_pd(drop, _mm256_or_pd(_mm256_and_pd(front, empty), _mm256_cmp_pd(area, zero, _CMP_EQ_OQ)));
    /* the band's depth beyond the outline: shape's metres for a face not edge-on (the larger) */
    __m256d metres = _mm256_add_pd(_mm256_set1_pd(BAND), _mm256_div_pd(_mm256_mul_pd(_mm256_mul_pd(_mm256_set1_pd(BAND_SLOPE), scale), scale), h));
    _mm256_storeu_pd(L.depth, _mm256_sub_pd(least, _mm256_mul_pd(metres, wide)));
    _mm256_storeu_pd(L.own_depth, _mm256_sub_pd(nearest, _mm256_andnot_pd(edge_on, metres)));
    for (int e = 0; e < 4; e++) _mm_storeu_si128((__m128i *)L.box[e], ends[e]);
    int dropped = _mm256_movemask_pd(drop), ahead = _mm256_movemask_pd(front);
    int finite = _mm256_movemask_pd(_mm256_and_pd(clean, _mm256_cmp_pd(_mm256_add_pd(area, _mm256_add_pd(h, scale)), far, _CMP_LT_OQ)));
    int uncut = _mm256_movemask_pd(whole) & finite;
    for (int l = 0; l < count; l++) {
        if (dropped >> l & 1) continue;
        int box[4] = {L.box[0][l], L.box[1][l], L.box[2][l], L.box[3][l]};
        if (uncut >> l & 1) { /* raster_shaped's own hidden_box */
            for (int e = 0; e < 4; e++) box[e] = L.own[e][l];
            if (covered(f, box, L.own_depth[l])) continue;
        } else if (ahead >> l & 1 && covered(f, box, L.depth[l]))
            continue;
        double one[3][3];
        for (int k = 0; k < 3; k++)
            for (int j = 0; j < 3; j++) one[k][j] = L.cam[k][j][l];
        int32_t index = members[l];
        if (!(finite >> l & 1)) {
            raster_seen(f, c[l], one, reach + 3 * (size_t)index, index, 0);
            continue;
        }
        Setup s; /* shape's values, and its answer */
        s.index = index;
        for (int i = 0; i < 3; i++) s.e1[i] = L.e1[i][l], s.e2[i] = L.e2[i][l], s.sv[i] = L.sv[i][l];
        s.twice_area = L.area[l], s.h = L.h[l], s.scale = L.scale[l], s.angle = 0.0;
        int state = s.h < GRAZING * s.scale ? EDGE_ON : READY;
        if (state == READY) s.angle = BAND_SLOPE * s.scale / s.h;
        Polygon projected; /* footprint's, when nothing cuts it */
        projected.n = 3;
        for (int k = 0; k < 3; k++)
            projected.p[k][0] = L.projected[k][0][l], projected.p[k][1] = L.projected[k][1][l], projected.p[k][2] = one[k][0];
        raster_shaped(f, c[l], one, reach + 3 * (size_t)index, &s, state, 0, uncut >> l & 1 ? &projected : NULL,
                      uncut >> l & 1 ? box : NULL);
    }
}
#endif

typedef struct {
    float *t, *u, *v;
    int32_t *tri;
    uint8_t *unsure;
} Out;

/* Pixel ``k``'s ray: as given, or turned by the yaw here with world_rays' float32 operations. */
static inline void ray_of(const Frame *f, size_t k, double d[3]) {
    if (!f->turned) {
        const float *dir = f->dirs + 3 * k;
        d[0] = dir[0], d[1] = dir[1], d[2] = dir[2];
        return;
    }
    size_t n = (size_t)f->width * f->height;
    float x = f->dirs[k], y = f->dirs[n + k];
    float dx = f->cos * x - f->sin * y, dy = f->sin * x + f->cos * y;
    d[0] = dx, d[1] = dy, d[2] = f->dirs[2 * n + k];
}

/* Set pixels ``first`` to ``last`` (excluded) of ``b`` to "no hit". A margin is read only
 * beside a triangle (or added to an infinite depth), so an old one may stay. */
static void clear_best(const Best *b, size_t first, size_t last) {
    double *restrict t = b->t;
    int32_t *restrict tri = b->tri;
    for (size_t k = first; k < last; k++) t[k] = INFINITY, tri[k] = -1;
    memset(b->state + first, 0, last - first);
}

/* Measure the hits of the ``n`` pixels ``list`` (their triangles in ``out.tri``) with the ray
 * caster's formula, one at a time. */
static void measure_pixels(const Frame *f, const float *corners, const int32_t *list, int n, Out out) {
    for (int m = 0; m < n; m++) {
        size_t k = (size_t)list[m];
        const float *a = corners + 9 * (size_t)out.tri[k];
        double d[3];
        ray_of(f, k, d);
        Exact hit = measure_corners(a, a + 3, a + 6, f->eye, d);
        out.t[k] = (float)hit.t, out.u[k] = (float)hit.u, out.v[k] = (float)hit.v;
    }
}

#ifdef HAVE_AVX2_PATH
/* What measure_corners computes from a triangle and the eye alone, four lanes of it: the
 * corner a, the edges, the eye from a (s), s x e1 (q) and e2 . q (t's numerator). */
typedef struct {
    __m256d ax, ay, az, e1x, e1y, e1z, e2x, e2y, e2z, sx, sy, sz, qx, qy, qz, tn;
} Lanes;

/* Four corners' coordinate ``q`` (of nine), as doubles. */
__attribute__((target("avx2"))) static inline __m256d corner_lanes(const float *const c[4], int q) {
    return _mm256_cvtps_pd(_mm_setr_ps(c[0][q], c[1][q], c[2][q], c[3][q]));
}

/* The Lanes of four triangles' corners ``c``, with measure_corners' operations. */
__attribute__((target("avx2"))) static inline void lanes_of(const Frame *f, const float *const c[4], Lanes *L) {
    L->ax = corner_lanes(c, 0), L->ay = corner_lanes(c, 1), L->az = corner_lanes(c, 2);
    L->e1x = _mm256_sub_pd(corner_lanes(c, 3), L->ax), L->e1y = _mm256_sub_pd(corner_lanes(c, 4), L->ay);
    L->e1z = _mm256_sub_pd(corner_lanes(c, 5), L->az), L->e2x = _mm256_sub_pd(corner_lanes(c, 6), L->ax);
    L->e2y = _mm256_sub_pd(corner_lanes(c, 7), L->ay), L->e2z = _mm256_sub_pd(corner_lanes(c, 8), L->az);
    L->sx = _mm256_sub_pd(_mm256_set1_pd(f->eye[0]), L->ax), L->sy = _mm256_sub_pd(_mm256_set1_pd(f->eye[1]), L->ay);
    L->sz = _mm256_sub_pd(_mm256_set1_pd(f->eye[2]), L->az);
    L->qx = _mm256_sub_pd(_mm256_mul_pd(L->sy, L->e1z), _mm256_mul_pd(L->sz, L->e1y));
    L->qy = _mm256_sub_pd(_mm256_mul_pd(L->sz, L->e1x), _mm256_mul_pd(L->sx, L->e1z));
    L->qz = _mm256_sub_pd(_mm256_mul_pd(L->sx, L->e1y), _mm256_mul_pd(L->sy, L->e1x));
    L->tn = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(L->e2x, L->qx), _mm256_mul_pd(L->e2y, L->qy)), _mm256_mul_pd(L->e2z, L->qz));
}

/* The rays of the four pixels ``k``, as ray_of makes them: loaded four at once when they are
 * neighbours and turned here, else one by one. */
__attribute__((target("avx2"))) static inline void ray_lanes(const Frame *f, const int32_t *k, __m256d d[3]) {
    if (f->turned && k[3] == k[0] + 3) {
        size_t n = (size_t)f->width * f->height;
        __m128 x = _mm_loadu_ps(f->dirs + k[0]), y = _mm_loadu_ps(f->dirs + n + k[0]);
        __m128 cos = _mm_set1_ps(f->cos), sin = _mm_set1_ps(f->sin);
        d[0] = _mm256_cvtps_pd(_mm_sub_ps(_mm_mul_ps(cos, x), _mm_mul_ps(sin, y)));
        d[1] = _mm256_cvtps_pd(_mm_add_ps(_mm_mul_ps(sin, x), _mm_mul_ps(cos, y)));
        d[2] = _mm256_cvtps_pd(_mm_loadu_ps(f->dirs + 2 * n + k[0]));
        return;
    }
    double ray[3][4];
    for (int l = 0; l < 4; l++) {
        double one[3];
        ray_of(f, (size_t)k[l], one);
        ray[0][l] = one[0], ray[1][l] = one[1], ray[2][l] = one[2];
    }
    for (int i = 0; i < 3; i++) d[i] = _mm256_loadu_pd(ray[i]);
}

/* The Lanes of one triangle in every lane, kept while neighbours share it. */
typedef struct {
    Lanes L;
    int32_t tri; /* -1: none held */
} Held;

/* Make ``h`` hold triangle ``tri`` (computing its Lanes only if it held another). */
__attribute__((target("avx2"))) static inline void hold(const Frame *f, const float *corners, int32_t tri, Held *h) {
    if (tri == h->tri) return;
    const float *a = corners + 9 * (size_t)tri, *c[4] = {a, a, a, a};
    lanes_of(f, c, &h->L);
    h->tri = tri;
}

/* measure_corners' t, u and v (as float32) of four rays ``d`` on the triangles of ``L``. */
__attribute__((target("avx2"))) static inline void hit_lanes(const Lanes *L, const __m256d d[3], __m128 hit[3]) {
    __m256d dx = d[0], dy = d[1], dz = d[2];
    __m256d px = _mm256_sub_pd(_mm256_mul_pd(dy, L->e2z), _mm256_mul_pd(dz, L->e2y));
    __m256d py = _mm256_sub_pd(_mm256_mul_pd(dz, L->e2x), _mm256_mul_pd(dx, L->e2z));
    __m256d pz = _mm256_sub_pd(_mm256_mul_pd(dx, L->e2y), _mm256_mul_pd(dy, L->e2x));
    __m256d det = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(L->e1x, px), _mm256_mul_pd(L->e1y, py)), _mm256_mul_pd(L->e1z, pz));
    __m256d u = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(L->sx, px), _mm256_mul_pd(L->sy, py)), _mm256_mul_pd(L->sz, pz));
    __m256d v = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(dx, L->qx), _mm256_mul_pd(dy, L->qy)), _mm256_mul_pd(dz, L->qz));
    hit[0] = _mm256_cvtpd_ps(_mm256_div_pd(L->tn, det));
    hit[1] = _mm256_cvtpd_ps(_mm256_div_pd(u, det));
    hit[2] = _mm256_cvtpd_ps(_mm256_div_pd(v, det));
}

/* Measure the four neighbours from pixel ``k``, all on triangle ``tri``, into ``out``. */
__attribute__((target("avx2"))) static inline void measure_four(const Frame *f, const float *corners, size_t k, int32_t tri, Held *h,
                                                                Out out) {
    hold(f, corners, tri, h);
    int32_t four[4] = {(int32_t)k, (int32_t)k + 1, (int32_t)k + 2, (int32_t)k + 3};
    __m256d d[3];
    __m128 hit[3];
    ray_lanes(f, four, d);
    hit_lanes(&h->L, d, hit);
    _mm_storeu_ps(out.t + k, hit[0]), _mm_storeu_ps(out.u + k, hit[1]), _mm_storeu_ps(out.v + k, hit[2]);
}

/* measure_pixels four pixels at a time: each lane does measure_corners' IEEE operations in
 * its order (IEEE division is exact in a vector too), so the bits are the same. What depends
 * on the triangle alone is computed once while neighbours share one (``h``). */
__attribute__((target("avx2"))) static void measure_pixels_avx2(const Frame *f, const float *corners, const int32_t *list, int n,
                                                                Held *h, Out out) {
    int m = 0;
    for (; m + 4 <= n; m += 4) {
        const int32_t *k = list + m;
        int32_t tri[4] = {out.tri[k[0]], out.tri[k[1]], out.tri[k[2]], out.tri[k[3]]};
        int same = tri[0] == tri[1] && tri[0] == tri[2] && tri[0] == tri[3];
        if (same && k[3] == k[0] + 3) {
            measure_four(f, corners, (size_t)k[0], tri[0], h, out);
            continue;
        }
        Lanes mixed;
        const Lanes *L = &mixed;
        if (same) {
            hold(f, corners, tri[0], h);
            L = &h->L;
        } else {
            const float *c[4];
            for (int l = 0; l < 4; l++) c[l] = corners + 9 * (size_t)tri[l];
            lanes_of(f, c, &mixed);
        }
        __m256d d[3];
        __m128 hit[3];
        ray_lanes(f, k, d);
        hit_lanes(L, d, hit);
        float ts[4], us[4], vs[4];
        _mm_storeu_ps(ts, hit[0]), _mm_storeu_ps(us, hit[1]), _mm_storeu_ps(vs, hit[2]);
        for (int l = 0; l < 4; l++) out.t[k[l]] = ts[l], out.u[k[l]] = us[l], out.v[k[l]] = vs[l];
    }
    measure_pixels(f, corners, list + m, n - m, out);
}
#endif

#define BLOCK 512 /* pixels written out at a time */

/* Write pixels ``first`` to ``last`` (excluded) as "no hit" or, where sure, the triangle only. */
static void write_block(Best b, size_t first, size_t last, int all_unsure, Out out) {
    const uint8_t *restrict state = b.state;
    const int32_t *restrict best_tri = b.tri;
    float *restrict t = out.t, *restrict u = out.u, *restrict v = out.v;
    int32_t *restrict tri = out.tri;
    uint8_t *restrict unsure = out.unsure;
    for (size_t k = first; k < last; k++) {
        uint8_t no = all_unsure || state[k];
        unsure[k] = no, tri[k] = no ? -1 : best_tri[k];
        t[k] = INFINITY, u[k] = 0.0f, v[k] = 0.0f;
    }
}

#ifdef HAVE_AVX2_PATH
/* write_block and clear_best eight pixels at a time ("no hit" is -1, all bits set, so a pixel's
 * triangle or'ed with its unsure mask); eight sure neighbours on one triangle are measured
 * here, the other sure pixels listed for measure_pixels_avx2 (returned: how many). */
__attribute__((target("avx2"))) static int write_block_avx2(const Frame *f, const float *corners, size_t first, size_t last,
                                                            int all_unsure, Held *h, Out out, int32_t *list) {
    const Best *b = &f->best;
    const __m256i none = _mm256_set1_epi32(-1), zero = _mm256_setzero_si256(), all = _mm256_set1_epi8(all_unsure ? -1 : 0);
    const __m256 far = _mm256_set1_ps(INFINITY), nothing = _mm256_setzero_ps();
    const __m256d far2 = _mm256_set1_pd(INFINITY);
    int sure = 0;
    size_t k = first;
    for (; k + 8 <= last; k += 8) {
        __m256i state = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(b->state + k)));
        __m256i unsure = _mm256_or_si256(_mm256_xor_si256(_mm256_cmpeq_epi32(state, zero), none), all);
        __m256i tri = _mm256_or_si256(_mm256_loadu_si256((const __m256i *)(b->tri + k)), unsure);
        __m128i words = _mm_packs_epi32(_mm256_castsi256_si128(unsure), _mm256_extracti128_si256(unsure, 1));
        _mm_storel_epi64((__m128i *)(out.unsure + k), _mm_and_si128(_mm_packs_epi16(words, words), _mm_set1_epi8(1)));
        _mm256_storeu_si256((__m256i *)(out.tri + k), tri);
        _mm256_storeu_pd(b->t + k, far2), _mm256_storeu_pd(b->t + k + 4, far2);
        _mm256_storeu_si256((__m256i *)(b->tri + k), none);
        memset(b->state + k, 0, 8);
        int32_t first_tri = _mm256_cvtsi256_si32(tri);
        __m256i one = _mm256_cmpeq_epi32(tri, _mm256_set1_epi32(first_tri));
        if (first_tri >= 0 && _mm256_movemask_ps(_mm256_castsi256_ps(one)) == 0xff) { /* sure, one triangle */
            measure_four(f, corners, k, first_tri, h, out), measure_four(f, corners, k + 4, first_tri, h, out);
            continue;
        }
        _mm256_storeu_ps(out.t + k, far), _mm256_storeu_ps(out.u + k, nothing), _mm256_storeu_ps(out.v + k, nothing);
        for (int bits = ~_mm256_movemask_ps(_mm256_castsi256_ps(tri)) & 0xff; bits; bits &= bits - 1)
            list[sure++] = (int32_t)(k + __builtin_ctz(bits));
    }
    if (k < last) {
        write_block(*b, k, last, all_unsure, out);
        for (size_t j = k; j < last; j++)
            if (out.tri[j] >= 0) list[sure++] = (int32_t)j;
        clear_best(b, k, last);
    }
    return sure;
}
#endif

/* Write each pixel's hit from its Best, and leave the Best "no hit" for the next frame (one
 * pass over the scratch, instead of another to clear it). */
static void write_pixels(const Frame *f, const float *corners, int all_unsure, Out out) {
    size_t n = (size_t)f->width * f->height;
    int32_t list[BLOCK];
#ifdef HAVE_AVX2_PATH
    Held held = {.tri = -1};
#endif
    for (size_t first = 0; first < n; first += BLOCK) {
        size_t last = first + BLOCK < n ? first + BLOCK : n;
#ifdef HAVE_AVX2_PATH
        if (simd_on) {
            int sure = write_block_avx2(f, corners, first, last, all_unsure, &held, out, list);
            measure_pixels_avx2(f, corners, list, sure, &held, out);
            continue;
        }
#endif
        int sure = 0;
        write_block(f->best, first, last, all_unsure, out);
        for (size_t k = first; k < last; k++)
            if (out.tri[k] >= 0) list[sure++] = (int32_t)k;
        clear_best(&f->best, first, last);
        measure_pixels(f, corners, list, sure, out); /* the ray caster's formula */
    }
}

static void frame_of(Frame *f, const double *camera, const float *eye) {
    for (int i = 0; i < 3; i++) f->eye[i] = eye[i];
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 3; i++) f->axes[k][i] = camera[3 * i + k];
    /* The longest ray, through a corner of the image (a little longer: an upper bound). */
    double half_w = f->width / 2.0 / f->focal, half_h = f->height / 2.0 / f->focal;
    f->reach_max = sqrt(1.0 + half_w * half_w + half_h * half_h) * (1.0 + 1e-6);
    f->close = 2.0 * NEAR * f->reach_max;
    f->slope_w = (f->width / 2.0 + MARGIN) / f->focal, f->slope_h = (f->height / 2.0 + MARGIN) / f->focal;
    double side_w = f->width / 2.0 + MARGIN, side_h = f->height / 2.0 + MARGIN;
    f->side_w = sqrt(side_w * side_w + f->focal * f->focal), f->side_h = sqrt(side_h * side_h + f->focal * f->focal);
}

static int check(Py_buffer *b, size_t items, size_t size, const char *name) {
    if ((size_t)b->len != items * size) {
        PyErr_Format(PyExc_ValueError, "raster: %s holds %zd bytes, expected %zu", name, b->len, items * size);
        return 0;
    }
    return 1;
}

/* A chunk of triangles in view: its bounding sphere's nearest depth, whether the eye is near
 * it (it is then never skipped as hidden), and which chunk it is. */
typedef struct {
    double depth;
    int near;
    size_t chunk;
} Chunk;

/* A frame's working memory, kept from frame to frame: a fresh Best (21 bytes a pixel), cleared
 * every frame, cost as much as a small frame's work and pushed a vector env's other worlds
 * out of the cache. Between frames every pixel is "no hit" (write_pixels leaves it so). Each
 * of Best's arrays has PAD more entries, which test_row_avx2's last group of a row may read
 * and write back unchanged. */
#define PAD 4
typedef struct {
    Best best;
    void *block; /* the one allocation that holds best's arrays */
    size_t pixels; /* pixels held */
    Tiles tiles;
    size_t tiles_held;
    int *columns;
    size_t rows;
    Chunk *order;
    size_t chunks;
} Scratch;

/* The process's scratch, lent to one frame at a time: ``frame`` releases the GIL, so a second
 * thread's frame meanwhile gets a scratch of its own. Both are taken and given back under the
 * GIL. A frame of more than KEPT_PIXELS gets its own too, so that one large picture does not
 * leave the process holding its scratch (21 bytes a pixel) for good. */
#define KEPT_PIXELS (640 * 640)
static Scratch kept;
static int kept_lent;

static void scratch_free(Scratch *s) {
    free(s->block), free(s->columns), free(s->order), free(s->tiles.far), free(s->tiles.stale);
    *s = (Scratch){0};
}

/* Make ``s`` hold at least ``pixels`` Bests (all "no hit"), ``rows`` rows and ``chunks``
 * chunks: whether it does. */
static int scratch_fit(Scratch *s, size_t pixels, size_t rows, size_t chunks, size_t tiles) {
    if (s->tiles_held < tiles) {
        free(s->tiles.far), free(s->tiles.stale);
        s->tiles_held = 0;
        s->tiles.far = malloc(tiles * sizeof(double)), s->tiles.stale = malloc(tiles);
        if (s->tiles.far == NULL || s->tiles.stale == NULL) return 0;
        s->tiles_held = tiles;
    }
    if (s->pixels < pixels) {
        free(s->block);
        s->pixels = 0;
        size_t held = pixels + PAD;
        char *block = s->block = malloc(held * (2 * sizeof(double) + sizeof(int32_t) + 1));
        if (block == NULL) return 0;
        s->best.t = (double *)block, s->best.margin = s->best.t + held;
        s->best.tri = (int32_t *)(s->best.margin + held), s->best.state = (uint8_t *)(s->best.tri + held);
        clear_best(&s->best, 0, held);
        memset(s->best.margin, 0, held * sizeof(double));
        s->pixels = pixels;
    }
    if (s->rows < rows) {
        free(s->columns);
        s->rows = 0;
        if ((s->columns = malloc(2 * rows * sizeof(int))) == NULL) return 0;
        s->rows = rows;
    }
    if (s->chunks < chunks) {
        free(s->order);
        s->chunks = 0;
        if ((s->order = malloc(2 * chunks * sizeof(Chunk))) == NULL) return 0; /* and merge_sort's room */
        s->chunks = chunks;
    }
    return 1;
}

/* Whether a chunk (``sphere``: its bounds, the sphere's centre and radius first) may show in the
 * frame or come near the eye; if so, fill ``out``. A chunk that does neither is skipped whole. */
static int chunk_matters(const Frame *f, const double *sphere, Chunk *out) {
    double rel[3] = {sphere[0] - f->eye[0], sphere[1] - f->eye[1], sphere[2] - f->eye[2]}, cam[3], r = sphere[3];
    for (int k = 0; k < 3; k++) cam[k] = dot3(f->axes[k], rel);
    out->depth = cam[0] - r;
    out->near = dot3(rel, rel) <= (r + f->close) * (r + f->close);
    if (out->near) return 1;
    if (cam[0] + r < NEAR) return 0;
    double half_w = f->width / 2.0 + MARGIN, half_h = f->height / 2.0 + MARGIN;
    double side_w = f->side_w, side_h = f->side_h;
    if (half_w * cam[0] - f->focal * fabs(cam[1]) < -r * side_w) return 0;
    return half_h * cam[0] - f->focal * fabs(cam[2]) >= -r * side_h;
}

/* The image range [lo, hi] of ``centre - focal * lateral / depth`` over a box in camera
 * coordinates: ``lateral`` from ``low`` to ``high``, depth from ``near`` to ``far`` (all ahead). */
ROUNDED static void box_range(const Frame *f, double low, double high, double near, double far, double centre, int size, int range[2]) {
    double most = high / (high >= 0 ? near : far), least = low / (low <= 0 ? near : far);
    range[0] = (int)greater(0.0, floor(lesser(size, centre - f->focal * most - 1.0)));
    range[1] = (int)lesser(size - 1.0, ceil(greater(-1.0, centre - f->focal * least + 1.0)));
}

/* Whether every pixel a chunk may cover already holds a hit nearer than the chunk by more than
 * any tie margin: none of its triangles could then change a pixel, sure or not. The chunk's
 * box (``bound``: centre, radius, half sides), turned to the camera's axes, lies within the
 * box of half sides ``sum_j |axis_k[j]| half[j]`` around its centre there: tighter than the
 * sphere around it, and much so for a flat piece of ground seen from eye height. (The box was
 * grown by a millionth of a metre, ahead of rounding.) */
static int hidden(const Frame *f, const double *bound, const Chunk *c) {
    if (c->near) return 0;
    double rel[3] = {bound[0] - f->eye[0], bound[1] - f->eye[1], bound[2] - f->eye[2]}, cam[3], half[3];
    for (int k = 0; k < 3; k++) {
        cam[k] = dot3(f->axes[k], rel);
        half[k] = fabs(f->axes[k][0]) * bound[4] + fabs(f->axes[k][1]) * bound[5] + fabs(f->axes[k][2]) * bound[6];
    }
    double near = cam[0] - half[0], far = cam[0] + half[0];
    if (!(near >= NEAR)) return 0;
    int box[4];
    box_range(f, cam[1] - half[1], cam[1] + half[1], near, far, f->width / 2.0, f->width, box);
    box_range(f, cam[2] - half[2], cam[2] + half[2], near, far, f->height / 2.0, f->height, box + 2);
    return covered(f, box, near);
}

/* Whether chunk ``x`` comes before ``y``: nearer, or as near and first in the table. */
static inline int before(const Chunk *x, const Chunk *y) { return x->depth < y->depth || (x->depth == y->depth && x->chunk < y->chunk); }

/* Sort ``order`` (``n`` chunks, none of depth NaN) by ``before`` into itself, ``room`` holding
 * as many more: qsort's order (by_depth), without a call per comparison (2-3 % of a forest
 * frame). Runs of eight by insertion, then merged pairwise. */
static void merge_sort(Chunk *order, size_t n, Chunk *room) {
    for (size_t start = 0; start < n; start += 8) {
        size_t end = start + 8 < n ? start + 8 : n;
        for (size_t i = start + 1; i < end; i++) {
            Chunk keep = order[i];
            size_t j = i;
            for (; j > start && before(&keep, order + j - 1); j--) order[j] = order[j - 1];
            order[j] = keep;
        }
    }
    Chunk *from = order, *to = room;
    for (size_t width = 8; width < n; width *= 2) {
        for (size_t start = 0; start < n; start += 2 * width) {
            size_t mid = start + width < n ? start + width : n, end = start + 2 * width < n ? start + 2 * width : n;
            size_t a = start, b = mid, k = start;
            while (a < mid && b < end) to[k++] = before(from + b, from + a) ? from[b++] : from[a++];
            while (a < mid) to[k++] = from[a++];
            while (b < end) to[k++] = from[b++];
        }
        Chunk *swap = from;
        from = to, to = swap;
    }
    if (from != order) memcpy(order, from, n * sizeof(Chunk));
}

static int by_depth(const void *a, const void *b) {
    const Chunk *x = a, *y = b;
    if (x->depth != y->depth) return x->depth < y->depth ? -1 : 1;
    return x->chunk < y->chunk ? -1 : x->chunk > y->chunk;
}

/* How many triangles chunk ``m`` holds (its CHUNK members: triangles, then -1s), or -1 - i when
 * its member i is neither a triangle (0 to ``count`` - 1) nor -1, or is a triangle after a -1.
 * Asked of the chunks in view only: the members of the others are never read. */
static int held_of(const int32_t *m, size_t count) {
    int held = 0;
    for (; held < CHUNK && m[held] >= 0; held++)
        if ((size_t)m[held] >= count) return -1 - held;
    for (int i = held; i < CHUNK; i++)
        if (m[i] != -1) return -1 - i;
    return held;
}

/* Rasterise every triangle of the ``chunks`` chunks (``members``: CHUNK triangle indices a
 * chunk, -1 after its last; ``bounds``: BOUND doubles a chunk), chunks in view nearest first
 * (so that nearer ones hide farther ones), ``order`` holding a Chunk per chunk; return 0 if one
 * came too near the eye. A member of a chunk in view that is not one (``held_of``) stops the
 * frame: ``bad`` gets its index. */
static int raster_all(Frame *f, const float *corners, const double *reach, size_t count, const int32_t *members, size_t chunks,
                      const double *bounds, Chunk *order, ptrdiff_t *bad) {
    size_t shown = 0;
    int unordered = 0;
    for (size_t k = 0; k < chunks; k++) {
        order[shown].chunk = k;
        if (chunk_matters(f, bounds + BOUND * k, order + shown)) unordered |= isnan(order[shown++].depth);
    }
    if (unordered)
        qsort(order, shown, sizeof(Chunk), by_depth);
    else
        merge_sort(order, shown, order + chunks);
    f->work->shown = (long)shown;
    int whole = 1;
    for (size_t k = 0; k < shown && whole; k++) {
        const int32_t *m = members + order[k].chunk * CHUNK;
        int held = held_of(m, count);
        if (held < 0) {
            *bad = (ptrdiff_t)(order[k].chunk * CHUNK) - 1 - held;
            return 1;
        }
        if (hidden(f, bounds + BOUND * order[k].chunk, order + k)) {
            f->work->hidden++;
            continue;
        }
        f->work->set_up += held;
#ifdef HAVE_AVX2_PATH
        if (simd_on) { /* a chunk near the eye: its triangles' nearness first (once one is too
                        * near, what was drawn no longer matters: every pixel is cast) */
            for (int i = 0; i < held && order[k].near && whole; i++) whole = !too_near(f, corners + 9 * (size_t)m[i]);
            for (int i = 0; i < held && whole; i += 4) raster_four(f, corners, reach, m + i, held - i < 4 ? held - i : 4);
            continue;
        }
#endif
        for (int i = 0; i < held && whole; i++)
            whole = raster_triangle(f, corners + 9 * (size_t)m[i], reach + 3 * (size_t)m[i], m[i], order[k].near);
    }
    return whole;
}

static Work last_work; /* the last frame's, for ``work`` */

static PyObject *frame(PyObject *self, PyObject *args) {
    Py_buffer corners, reach, apart, members, bounds, camera, eye, dirs, t, tri, u, v, unsure;
    Frame f;
    f.cos = NAN, f.sin = NAN;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*y*diiw*w*w*w*w*|ff", &corners, &reach, &apart, &members, &bounds, &camera, &eye, &dirs, &f.focal,
                          &f.width, &f.height, &t, &tri, &u, &v, &unsure, &f.cos, &f.sin))
        return NULL;
    f.turned = !isnan(f.cos);
    PyObject *result = NULL;
    size_t count = (size_t)corners.len / (9 * sizeof(float)), n = (size_t)f.width * f.height;
    size_t chunks = (size_t)members.len / (CHUNK * sizeof(int32_t));
    Scratch own = {0}, *scratch = kept_lent || n > KEPT_PIXELS ? &own : &kept;
    int lent = scratch == &kept;
    kept_lent |= lent;
    f.dirs = dirs.buf, f.apart = apart.buf;
    if (!check(&reach, 3 * count, sizeof(double), "reach") || !check(&apart, count, sizeof(double), "apart") ||
        !check(&members, CHUNK * chunks, sizeof(int32_t), "members") ||
        !check(&bounds, BOUND * chunks, sizeof(double), "bounds") || !check(&camera, 9, sizeof(double), "camera") ||
        !check(&eye, 3, sizeof(float), "eye") || !check(&dirs, 3 * n, sizeof(float), "dirs") ||
        !check(&t, n, sizeof(float), "t") || !check(&tri, n, sizeof(int32_t), "triangle") ||
        !check(&u, n, sizeof(float), "u") || !check(&v, n, sizeof(float), "v") || !check(&unsure, n, 1, "unsure"))
        goto done;
    size_t across = ((size_t)f.width + TILE - 1) / TILE, tiles = across * (((size_t)f.height + TILE - 1) / TILE);
    if (!scratch_fit(scratch, n, (size_t)f.height, chunks ? chunks : 1, tiles)) {
        PyErr_NoMemory();
        goto done;
    }
    f.best = scratch->best, f.columns = scratch->columns, f.tiles = scratch->tiles, f.tiles.across = (int)across;
    for (size_t k = 0; k < tiles; k++) f.tiles.far[k] = INFINITY; /* every pixel is "no hit" */
    memset(f.tiles.stale, 0, tiles);
    frame_of(&f, camera.buf, eye.buf);
    int whole;
    Work done_here = {0};
    f.work = &done_here;
    ptrdiff_t bad = -1;
    Py_BEGIN_ALLOW_THREADS;
    whole = raster_all(&f, corners.buf, reach.buf, count, members.buf, chunks, bounds.buf, scratch->order, &bad);
    write_pixels(&f, corners.buf, !whole, (Out){t.buf, u.buf, v.buf, tri.buf, unsure.buf}); /* clears the scratch too */
    Py_END_ALLOW_THREADS;
    last_work = done_here; /* under the GIL again */
    if (bad >= 0) {
        PyErr_Format(PyExc_ValueError,
                     "raster: members[%zd] is %d; allowed: -1 or a triangle, 0 to %zd, and in a chunk of %d no triangle after a -1", bad,
                     (int)((const int32_t *)members.buf)[bad], (Py_ssize_t)count - 1, CHUNK);
        goto done;
    }
    result = PyBool_FromLong(whole);
done:
    if (lent)
        kept_lent = 0;
    else
        scratch_free(&own);
    PyBuffer_Release(&corners), PyBuffer_Release(&reach), PyBuffer_Release(&apart), PyBuffer_Release(&members), PyBuffer_Release(&bounds), PyBuffer_Release(&camera), PyBuffer_Release(&eye);
    PyBuffer_Release(&dirs), PyBuffer_Release(&t), PyBuffer_Release(&tri), PyBuffer_Release(&u);
    PyBuffer_Release(&v), PyBuffer_Release(&unsure);
    return result;
}

/* The output stage: each pixel's instance id and RGB from its hit, in one pass. The numpy
 * path of sortie.sim.render (Renderer.shade, RayCaster.object_ids) is the reference; every
 * step here is its operation in the same float32 arithmetic (no fused multiply-add), so the
 * images are the same bit for bit. The tables have one "no hit" row at the end, which a pixel
 * without a hit reads, as numpy's take of -1 does. */
typedef struct {
    const int32_t *tri;
    const float *u, *v;
    const int32_t *object_id;
    const uint8_t *color, *textured, *image, *sky;
    const float *shade, *uv;
    int image_width, image_height;
    int32_t last;
} Shading;

/* numpy's clip(x, 0, high) of a float32: the larger of x and 0, then the smaller of that and
 * high (a NaN, which numpy could not index with, reads as 0). */
static inline float clip_float(float x, float high) {
    if (!(x >= 0.0f)) return 0.0f;
    return x > high ? high : x;
}

/* The texel under a textured face's hit (Renderer._texels), lit by the face's shade. */
static void texel(const Shading *s, size_t k, int32_t row, uint8_t *rgb) {
    const float *uv = s->uv + 6 * (size_t)row;
    float u = s->u[k], v = s->v[k], w = 1.0f - u - v;
    float x = w * uv[0] + u * uv[2] + v * uv[4], y = w * uv[1] + u * uv[3] + v * uv[5];
    size_t col = (size_t)clip_float(x + 0.5f, (float)(s->image_width - 1));
    size_t line = (size_t)clip_float(y + 0.5f, (float)(s->image_height - 1));
    const uint8_t *texel = s->image + 3 * (line * (size_t)s->image_width + col);
    float light = s->shade[row];
    for (int i = 0; i < 3; i++) rgb[i] = (uint8_t)clip_float((float)texel[i] * light, 255.0f);
}

#define RUN 8 /* pixels written at once where they share an untextured triangle, or the sky */

/* Whether the RUN triangles from ``tri`` are all ``first``. */
static inline int one_run(const int32_t *tri, int32_t first) {
    int same = 1;
    for (int l = 1; l < RUN; l++) same &= tri[l] == first;
    return same;
}

/* Returns the first pixel whose triangle is not in the tables, or n when all are. RUN
 * neighbours on one untextured face (most of a frame) get its id and colour copied at once:
 * the values the pixel-by-pixel branch writes. */
static size_t shade_pixels(const Shading *s, size_t n, int32_t *ids, uint8_t *rgb) {
    int32_t held = -1; /* the face whose colour ``pattern`` repeats RUN times, or -1 */
    uint8_t pattern[3 * RUN];
    size_t k = 0;
    while (k < n) {
        int32_t tri = s->tri[k], row = tri >= 0 ? tri : s->last;
        if (tri >= s->last || tri < -1) return k;
        if (k + RUN <= n && !s->textured[row] && one_run(s->tri + k, tri)) {
            if (ids)
                for (int l = 0; l < RUN; l++) ids[k + l] = s->object_id[row];
            if (rgb && tri < 0) memcpy(rgb + 3 * k, s->sky + 3 * k, 3 * RUN);
            if (rgb && tri >= 0) {
                if (tri != held)
                    for (int l = 0; l < RUN; l++) memcpy(pattern + 3 * l, s->color + 3 * (size_t)row, 3);
                held = tri;
                memcpy(rgb + 3 * k, pattern, 3 * RUN);
            }
            k += RUN;
            continue;
        }
        if (ids) ids[k] = s->object_id[row];
        if (rgb) {
            uint8_t *out = rgb + 3 * k;
            const uint8_t *color = tri >= 0 ? s->color + 3 * (size_t)row : s->sky + 3 * k;
            if (s->textured[row])
                texel(s, k, row, out);
            else
                out[0] = color[0], out[1] = color[1], out[2] = color[2];
        }
        k++;
    }
    return n;
}

/* A writable buffer of ``size`` bytes, or none (``obj`` None): whether that went well. */
static int optional_out(PyObject *obj, Py_buffer *b, size_t size, const char *name) {
    b->obj = NULL, b->buf = NULL;
    if (obj == Py_None) return 1;
    if (PyObject_GetBuffer(obj, b, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) {
        b->obj = NULL;
        return 0;
    }
    return check(b, size, 1, name);
}

static PyObject *output(PyObject *self, PyObject *args) {
    Py_buffer tri, u, v, object_id, color, shade, textured, uv, image, sky, ids = {0}, rgb = {0};
    PyObject *ids_obj, *rgb_obj, *result = NULL;
    Shading s;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*y*y*iiy*OO", &tri, &u, &v, &object_id, &color, &shade, &textured, &uv, &image,
                          &s.image_width, &s.image_height, &sky, &ids_obj, &rgb_obj))
        return NULL;
    size_t n = (size_t)tri.len / sizeof(int32_t), rows = (size_t)object_id.len / sizeof(int32_t);
    size_t texels = (size_t)(s.image_width > 0 ? s.image_width : 0) * (size_t)(s.image_height > 0 ? s.image_height : 0);
    if (!check(&u, n, sizeof(float), "u") || !check(&v, n, sizeof(float), "v") || !check(&tri, n, sizeof(int32_t), "triangle") ||
        rows == 0 || !check(&color, 3 * rows, 1, "color") || !check(&shade, rows, sizeof(float), "shade") ||
        !check(&textured, rows, 1, "textured") || !check(&uv, 6 * rows, sizeof(float), "uv") ||
        !check(&image, 3 * texels, 1, "image") || texels == 0 || (rgb_obj != Py_None && !check(&sky, 3 * n, 1, "sky")) ||
        !optional_out(ids_obj, &ids, n * sizeof(int32_t), "ids") || !optional_out(rgb_obj, &rgb, 3 * n, "rgb"))
        goto done;
    s.tri = tri.buf, s.u = u.buf, s.v = v.buf, s.object_id = object_id.buf, s.color = color.buf, s.shade = shade.buf;
    s.textured = textured.buf, s.uv = uv.buf, s.image = image.buf, s.sky = sky.buf, s.last = (int32_t)(rows - 1);
    size_t shaded;
    Py_BEGIN_ALLOW_THREADS;
    shaded = shade_pixels(&s, n, ids.buf, rgb.buf);
    Py_END_ALLOW_THREADS;
    if (shaded < n)
        PyErr_Format(PyExc_ValueError, "raster.output: pixel %zu hits triangle %d, allowed -1 (none) to %d", shaded,
                     (int)s.tri[shaded], (int)s.last - 1);
    else
        result = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&tri), PyBuffer_Release(&u), PyBuffer_Release(&v), PyBuffer_Release(&object_id), PyBuffer_Release(&color);
    PyBuffer_Release(&shade), PyBuffer_Release(&textured), PyBuffer_Release(&uv), PyBuffer_Release(&image), PyBuffer_Release(&sky);
    if (ids.obj) PyBuffer_Release(&ids);
    if (rgb.obj) PyBuffer_Release(&rgb);
    return result;
}

/* simd([on]) -> bool: whether the pixel loops run four pixels an instruction; ``on`` switches
 * that (on only where the CPU has AVX2), for tests that compare both paths. */
static PyObject *simd(PyObject *self, PyObject *args) {
    int on = -1;
    if (!PyArg_ParseTuple(args, "|p", &on)) return NULL;
#ifdef HAVE_AVX2_PATH
    if (on >= 0) simd_on = on && __builtin_cpu_supports("avx2");
#endif
    return PyBool_FromLong(simd_on);
}

static PyObject *frame_work(PyObject *self, PyObject *args) {
    return Py_BuildValue("{s:l,s:l,s:l,s:l}", "chunks shown", last_work.shown, "chunks hidden", last_work.hidden, "triangles set up",
                         last_work.set_up, "triangles tested", last_work.tested);
}

static PyMethodDef methods[] = {
    {"simd", simd, METH_VARARGS,
     "simd([on]) -> bool: whether the pixel loops run four pixels an instruction (AVX2); on switches that, "
     "where the CPU has AVX2 (SORTIE_RASTER_SIMD=0 starts with it off)."},
    {"frame", frame, METH_VARARGS,
     "frame(corners, reach, apart, members, bounds, camera, eye, dirs, focal, width, height, t, triangle, u, v, unsure[, cos, sin]) -> bool: "
     "rasterise a frame into the hit arrays; False when the eye is so near a triangle that every pixel is unsure. "
     "members holds CHUNK triangle indices a chunk (-1 after its last), bounds 7 doubles a chunk (its box's centre, "
     "the radius of the sphere around the box, the box's half sides). "
     "With cos and sin, dirs holds the rays at zero yaw as rows x, y, z, turned here by that yaw."},
    {"work", frame_work, METH_NOARGS,
     "work() -> dict: what this process's last frame did: chunks in view or near the eye, chunks skipped whole as hidden, "
     "triangles set up (in the chunks drawn) and triangles whose pixels were tested."},
    {"output", output, METH_VARARGS,
     "output(triangle, u, v, object_id, color, shade, textured, uv, image, image_width, image_height, sky, ids, rgb) "
     "-> None: write each pixel's instance id and RGB from its hit (ids or rgb None: not asked for)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_raster", "The camera as a rasteriser (sortie.sim.raster).", -1,
                                    methods};

PyMODINIT_FUNC PyInit__raster(void) {
#ifdef HAVE_AVX2_PATH
    const char *simd = getenv("SORTIE_RASTER_SIMD");
    simd_on = __builtin_cpu_supports("avx2") && !(simd != NULL && strcmp(simd, "0") == 0);
#endif
    return PyModule_Create(&module);
}
