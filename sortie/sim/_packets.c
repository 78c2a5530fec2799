/* Embree packet tracing for sortie: 8 or 16 rays per call to Embree instead of one.
 *
 * embreex intersects one ray at a time (rtcIntersect1), which costs 75-150 ns a ray here;
 * Embree's packet API over 4x4 pixel tiles is faster on the same scenes: one rtcIntersect16
 * where the CPU runs it natively (AVX-512), else two rtcIntersect8 (AVX2: Embree would run
 * a 16-ray call as single rays). This module opens the libembree4 that embreex ships (its
 * path comes from Python), builds triangle scenes the same way embreex does (robust flag, one
 * vertex per corner) and traces batches of rays, a static scene and an optional dynamic one in the same call, with
 * the GIL released. It declares the few Embree 4 types and functions it uses itself, since
 * the wheel ships no headers; sortie.sim.packets checks the result against embreex once per
 * process before trusting it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_exact.h"

#define INVALID 0xFFFFFFFFu
#define FORMAT_UINT3 0x5003
#define FORMAT_FLOAT3 0x9003
#define BUFFER_INDEX 0
#define BUFFER_VERTEX 1
#define GEOMETRY_TRIANGLE 0
#define SCENE_FLAG_ROBUST 4

typedef struct __attribute__((aligned(64))) {
    float org_x[16], org_y[16], org_z[16], tnear[16];
    float dir_x[16], dir_y[16], dir_z[16], time[16];
    float tfar[16];
    unsigned int mask[16], id[16], flags[16];
} Ray16;

typedef struct __attribute__((aligned(64))) {
    float ng_x[16], ng_y[16], ng_z[16], u[16], v[16];
    unsigned int prim[16], geom[16];
    unsigned int inst[16], inst_prim[16];
    unsigned int spare[64]; /* room for builds with more instance levels */
} Hit16;

typedef struct __attribute__((aligned(64))) {
    Ray16 ray;
    Hit16 hit;
} RayHit16;

typedef struct __attribute__((aligned(32))) {
    float org_x[8], org_y[8], org_z[8], tnear[8];
    float dir_x[8], dir_y[8], dir_z[8], time[8];
    float tfar[8];
    unsigned int mask[8], id[8], flags[8];
    float ng_x[8], ng_y[8], ng_z[8], u[8], v[8];
    unsigned int prim[8], geom[8];
    unsigned int inst[8], inst_prim[8];
    unsigned int spare[32]; /* room for builds with more instance levels */
} RayHit8;

typedef struct __attribute__((aligned(16))) {
    float org_x, org_y, org_z, tnear, dir_x, dir_y, dir_z, time, tfar;
    unsigned int mask, id, flags;
    float ng_x, ng_y, ng_z, u, v;
    unsigned int prim, geom, inst, inst_prim;
    unsigned int spare[16];
} RayHit1;

typedef void *(*new_device_fn)(const char *);
typedef int (*device_error_fn)(void *);
typedef void *(*new_scene_fn)(void *);
typedef void (*scene_flags_fn)(void *, int);
typedef void *(*new_geometry_fn)(void *, int);
typedef void *(*new_buffer_fn)(void *, int, unsigned int, int, size_t, size_t);
typedef void (*handle_fn)(void *);
typedef unsigned int (*attach_fn)(void *, void *);
typedef void (*intersect16_fn)(const int *, void *, RayHit16 *, void *);
typedef void (*intersect1_fn)(void *, RayHit1 *, void *);
typedef void (*intersect8_fn)(const int *, void *, RayHit8 *, void *);
typedef ssize_t (*device_property_fn)(void *, int);

#define PROPERTY_NATIVE_RAY8 33
#define PROPERTY_NATIVE_RAY16 34

static struct {
    void *library, *device;
    new_device_fn new_device;
    device_error_fn device_error;
    new_scene_fn new_scene;
    scene_flags_fn scene_flags;
    new_geometry_fn new_geometry;
    new_buffer_fn new_buffer;
    handle_fn commit_geometry, release_geometry, commit_scene, release_scene;
    attach_fn attach;
    intersect16_fn intersect16;
    intersect8_fn intersect8;
    intersect1_fn intersect1;
    device_property_fn device_property;
    int width; /* lanes per Embree call: 16, or 8 where only 8-wide kernels are native */
} E;

static int find(void **slot, const char *name) {
    *slot = dlsym(E.library, name);
    if (*slot == NULL) {
        PyErr_Format(PyExc_OSError, "libembree4 has no %s", name);
        return -1;
    }
    return 0;
}

static PyObject *load(PyObject *self, PyObject *args) {
    const char *path, *config = "threads=1";
    if (!PyArg_ParseTuple(args, "s|s", &path, &config)) return NULL;
    if (E.device != NULL) Py_RETURN_NONE;
    E.library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (E.library == NULL) return PyErr_Format(PyExc_OSError, "cannot open %s: %s", path, dlerror());
    if (find((void **)&E.new_device, "rtcNewDevice") || find((void **)&E.device_error, "rtcGetDeviceError") ||
        find((void **)&E.new_scene, "rtcNewScene") || find((void **)&E.scene_flags, "rtcSetSceneFlags") ||
        find((void **)&E.new_geometry, "rtcNewGeometry") || find((void **)&E.new_buffer, "rtcSetNewGeometryBuffer") ||
        find((void **)&E.commit_geometry, "rtcCommitGeometry") || find((void **)&E.release_geometry, "rtcReleaseGeometry") ||
        find((void **)&E.commit_scene, "rtcCommitScene") || find((void **)&E.release_scene, "rtcReleaseScene") ||
        find((void **)&E.attach, "rtcAttachGeometry") || find((void **)&E.intersect16, "rtcIntersect16") ||
        find((void **)&E.intersect1, "rtcIntersect1") || find((void **)&E.intersect8, "rtcIntersect8") ||
        find((void **)&E.device_property, "rtcGetDeviceProperty"))
        return NULL;
    E.device = E.new_device(config);
    if (E.device == NULL) return PyErr_Format(PyExc_OSError, "rtcNewDevice failed (error %d)", E.device_error(NULL));
    /* Without AVX-512, Embree runs a 16-ray call as 16 single rays plus copying (slower than
     * single rays); its 8-ray kernels are native on AVX2. Which triangle a ray meets does not
     * depend on the kernel: every hit is measured again and settled below. */
    int native16 = E.device_property(E.device, PROPERTY_NATIVE_RAY16) > 0;
    int native8 = E.device_property(E.device, PROPERTY_NATIVE_RAY8) > 0;
    E.width = !native16 && native8 ? 8 : 16;
    Py_RETURN_NONE;
}

/* packet_width([lanes]) -> lanes per Embree call; 8 or 16 sets it (for benchmarks). */
static PyObject *packet_width(PyObject *self, PyObject *args) {
    int lanes = 0;
    if (!PyArg_ParseTuple(args, "|i", &lanes)) return NULL;
    if (lanes == 8 || lanes == 16) E.width = lanes;
    else if (lanes != 0) return PyErr_Format(PyExc_ValueError, "packet_width: expected 8 or 16, got %d", lanes);
    return PyLong_FromLong(E.width);
}

/* Intersect a 16-lane packet with ``scene``: in one call, or in two 8-lane halves. */
static void intersect(const int *valid, void *scene, RayHit16 *p) {
    if (E.width == 16) {
        E.intersect16(valid, scene, p, NULL);
        return;
    }
    for (int half = 0; half < 16; half += 8) {
        int any = 0;
        for (int k = 0; k < 8; k++) any |= valid[half + k];
        if (!any) continue;
        RayHit8 q;
        for (int k = 0; k < 8; k++) {
            int i = half + k;
            q.org_x[k] = p->ray.org_x[i], q.org_y[k] = p->ray.org_y[i], q.org_z[k] = p->ray.org_z[i];
            q.dir_x[k] = p->ray.dir_x[i], q.dir_y[k] = p->ray.dir_y[i], q.dir_z[k] = p->ray.dir_z[i];
            q.tnear[k] = p->ray.tnear[i], q.time[k] = p->ray.time[i], q.tfar[k] = p->ray.tfar[i];
            q.mask[k] = p->ray.mask[i], q.id[k] = p->ray.id[i], q.flags[k] = p->ray.flags[i];
            q.geom[k] = q.prim[k] = q.inst[k] = INVALID;
        }
        E.intersect8(valid + half, scene, &q, NULL);
        for (int k = 0; k < 8; k++) {
            int i = half + k;
            p->ray.tfar[i] = q.tfar[k];
            p->hit.ng_x[i] = q.ng_x[k], p->hit.ng_y[i] = q.ng_y[k], p->hit.ng_z[i] = q.ng_z[k];
            p->hit.u[i] = q.u[k], p->hit.v[i] = q.v[k];
            p->hit.prim[i] = q.prim[k], p->hit.geom[i] = q.geom[k], p->hit.inst[i] = q.inst[k];
        }
    }
}

/* A committed Embree scene, the box around its triangles (to skip it cheaply) and its corners
 * (Embree's vertex buffer, four floats a vertex), from which each hit is measured again. */
typedef struct {
    void *handle;
    float low[3], high[3];
    const float *vertices;
} Scene;

static void drop_scene(PyObject *capsule) {
    Scene *scene = PyCapsule_GetPointer(capsule, "sortie.embree.scene");
    if (scene == NULL) return;
    if (E.release_scene != NULL) E.release_scene(scene->handle);
    PyMem_Free(scene);
}

/* new_scene(corners: float32 buffer of (T, 3, 3)) -> capsule */
static PyObject *new_scene(PyObject *self, PyObject *args) {
    Py_buffer corners;
    if (E.device == NULL) return PyErr_Format(PyExc_RuntimeError, "call load() first");
    if (!PyArg_ParseTuple(args, "y*", &corners)) return NULL;
    size_t count = (size_t)corners.len / (9 * sizeof(float));
    if (count == 0 || (size_t)corners.len != count * 9 * sizeof(float)) {
        PyBuffer_Release(&corners);
        return PyErr_Format(PyExc_ValueError, "corners: expected a non-empty float32 (T, 3, 3) buffer");
    }
    const float *c = (const float *)corners.buf;
    void *scene = E.new_scene(E.device);
    E.scene_flags(scene, SCENE_FLAG_ROBUST);
    void *geometry = E.new_geometry(E.device, GEOMETRY_TRIANGLE);
    float *vertices = E.new_buffer(geometry, BUFFER_VERTEX, 0, FORMAT_FLOAT3, 4 * sizeof(float), 3 * count);
    unsigned int *faces = E.new_buffer(geometry, BUFFER_INDEX, 0, FORMAT_UINT3, 3 * sizeof(unsigned int), count);
    if (vertices == NULL || faces == NULL) {
        PyBuffer_Release(&corners);
        return PyErr_Format(PyExc_MemoryError, "Embree could not allocate %zu triangles", count);
    }
    Scene *box = PyMem_Malloc(sizeof(Scene));
    if (box == NULL) {
        PyBuffer_Release(&corners);
        return PyErr_NoMemory();
    }
    for (int k = 0; k < 3; k++) box->low[k] = box->high[k] = c[k];
    for (size_t i = 0; i < 3 * count; i++) {
        for (int k = 0; k < 3; k++) {
            box->low[k] = fminf(box->low[k], c[3 * i + k]);
            box->high[k] = fmaxf(box->high[k], c[3 * i + k]);
        }
        vertices[4 * i] = c[3 * i];
        vertices[4 * i + 1] = c[3 * i + 1];
        vertices[4 * i + 2] = c[3 * i + 2];
        vertices[4 * i + 3] = 0.0f;
        faces[i] = (unsigned int)i;
    }
    PyBuffer_Release(&corners);
    E.commit_geometry(geometry);
    E.attach(scene, geometry);
    E.release_geometry(geometry);
    E.commit_scene(scene);
    int error = E.device_error(E.device);
    if (error) {
        E.release_scene(scene);
        PyMem_Free(box);
        return PyErr_Format(PyExc_RuntimeError, "Embree error %d while building a scene", error);
    }
    box->handle = scene;
    box->vertices = vertices;
    PyObject *capsule = PyCapsule_New(box, "sortie.embree.scene", drop_scene);
    if (capsule == NULL) {
        E.release_scene(scene);
        PyMem_Free(box);
    }
    return capsule;
}

/* What deciding a hit needs of every triangle of the caster's table (sortie.sim.exact.Faces):
 * corners, normals, edge heights, grown boxes and the coincident partners (compressed rows).
 * The arrays belong to Python objects that this capsule holds views of. */
typedef struct {
    Py_buffer views[10];
    const float *corners;
    const double *normal, *reach, *low, *high;
    const int64_t *same_start, *same_index, *opposite_start, *opposite_index;
    Py_ssize_t count;
} Decider;

static void drop_decider(PyObject *capsule) {
    Decider *f = PyCapsule_GetPointer(capsule, "sortie.embree.decider");
    if (f == NULL) return;
    for (int i = 0; i < 10; i++)
        if (f->views[i].obj) PyBuffer_Release(&f->views[i]);
    PyMem_Free(f);
}

/* new_decider(corners f32 (T,3,3), normal, reach, low, high f64 (T,3), same_start, same_index,
 * opposite_start, opposite_index int64) -> capsule; the arrays must stay unchanged. */
static PyObject *new_decider(PyObject *self, PyObject *args) {
    PyObject *objects[9];
    if (!PyArg_ParseTuple(args, "OOOOOOOOO", &objects[0], &objects[1], &objects[2], &objects[3], &objects[4],
                          &objects[5], &objects[6], &objects[7], &objects[8]))
        return NULL;
    Decider *f = PyMem_Calloc(1, sizeof(Decider));
    if (f == NULL) return PyErr_NoMemory();
    PyObject *capsule = PyCapsule_New(f, "sortie.embree.decider", drop_decider);
    if (capsule == NULL) {
        PyMem_Free(f);
        return NULL;
    }
    for (int i = 0; i < 9; i++)
        if (PyObject_GetBuffer(objects[i], &f->views[i], PyBUF_C_CONTIGUOUS) < 0) {
            Py_DECREF(capsule);
            return NULL;
        }
    f->count = f->views[0].len / (Py_ssize_t)(9 * sizeof(float));
    Py_ssize_t triples = f->count * 3 * (Py_ssize_t)sizeof(double), starts = (f->count + 1) * (Py_ssize_t)sizeof(int64_t);
    if (f->views[1].len != triples || f->views[2].len != triples || f->views[3].len != triples ||
        f->views[4].len != triples || f->views[5].len != starts || f->views[7].len != starts) {
        Py_DECREF(capsule);
        return PyErr_Format(PyExc_ValueError, "new_decider: arrays do not match %zd triangles", f->count);
    }
    f->corners = f->views[0].buf;
    f->normal = f->views[1].buf;
    f->reach = f->views[2].buf;
    f->low = f->views[3].buf;
    f->high = f->views[4].buf;
    f->same_start = f->views[5].buf;
    f->same_index = f->views[6].buf;
    f->opposite_start = f->views[7].buf;
    f->opposite_index = f->views[8].buf;
    return capsule;
}

typedef struct {
    const float *origins, *directions, *tmax;
    const uint8_t *dynamic_rows;
    float *t, *u, *v;
    int32_t *triangle;
    uint8_t *unsure;
    Scene *fixed, *moving;
    const Decider *decider;
    int32_t offset;
    int one_origin; /* every ray starts at origins[0..2] (a camera's eye) */
} Batch;

/* Fill one packet's lane from ray ``row``. */
static void set_lane(RayHit16 *p, int lane, const Batch *b, Py_ssize_t row) {
    const float *origin = b->origins + (b->one_origin ? 0 : 3 * row);
    p->ray.org_x[lane] = origin[0];
    p->ray.org_y[lane] = origin[1];
    p->ray.org_z[lane] = origin[2];
    p->ray.dir_x[lane] = b->directions[3 * row];
    p->ray.dir_y[lane] = b->directions[3 * row + 1];
    p->ray.dir_z[lane] = b->directions[3 * row + 2];
    p->ray.tnear[lane] = 0.0f;
    p->ray.time[lane] = 0.0f;
    p->ray.tfar[lane] = b->tmax ? b->tmax[row] : INFINITY;
    p->ray.mask[lane] = INVALID;
    p->ray.id[lane] = 0;
    p->ray.flags[lane] = 0;
    p->hit.geom[lane] = INVALID;
    p->hit.prim[lane] = INVALID;
    p->hit.inst[lane] = INVALID;
}

/* Return whether any ray of ``lanes`` may meet ``scene``'s box before its tfar (a slab test
 * on a slightly grown box: when in doubt, yes). Most packets miss the few dynamic objects, and
 * this test costs a tenth of an Embree call. */
static int may_meet(const Scene *scene, const RayHit16 *p, const int *lanes) {
    const float *o[3] = {p->ray.org_x, p->ray.org_y, p->ray.org_z};
    const float *d[3] = {p->ray.dir_x, p->ray.dir_y, p->ray.dir_z};
    for (int k = 0; k < 16; k++) {
        if (!lanes[k]) continue;
        float near = 0.0f, far = p->ray.tfar[k];
        for (int axis = 0; axis < 3 && near <= far; axis++) {
            float grow = 1e-3f + 1e-4f * (fabsf(scene->low[axis]) + fabsf(scene->high[axis]));
            float low = scene->low[axis] - grow, high = scene->high[axis] + grow;
            float origin = o[axis][k], step = d[axis][k];
            if (step == 0.0f) {
                if (origin < low || origin > high) far = -1.0f;
                continue;
            }
            float t1 = (low - origin) / step, t2 = (high - origin) / step;
            near = fmaxf(near, fminf(t1, t2));
            far = fminf(far, fmaxf(t1, t2));
        }
        if (near <= far * 1.0001f + 1e-6f) return 1;
    }
    return 0;
}

static void lane_ray(const RayHit16 *p, int k, double o[3], double d[3]) {
    o[0] = p->ray.org_x[k], o[1] = p->ray.org_y[k], o[2] = p->ray.org_z[k];
    d[0] = p->ray.dir_x[k], d[1] = p->ray.dir_y[k], d[2] = p->ray.dir_z[k];
}

/* ``vertices``: Embree's buffer, four floats a vertex. */
static Exact measure(const float *vertices, unsigned int prim, const RayHit16 *p, int k) {
    const float *a = vertices + 12 * (size_t)prim;
    double o[3], d[3];
    lane_ray(p, k, o, d);
    return measure_corners(a, a + 4, a + 8, o, d);
}

/* Embree's search runs a little past each ray's tmax (GROW) so that a hit right at tmax is found
 * on every CPU; the exact distance then decides, against tmax itself. */
static float grown(float tmax) { return isinf(tmax) ? tmax : tmax + 1e-4f * fabsf(tmax) + 1e-5f; }

typedef struct {
    Exact exact;
    unsigned int prim;
    int found;
} Found;

/* Read lane ``k``'s hit in ``scene`` (if any) and measure it exactly; ``limit`` is its tmax. */
static Found found_in(const Scene *scene, const RayHit16 *p, int k, float limit) {
    Found f = {{INFINITY, 0.0, 0.0}, INVALID, 0};
    if (p->hit.geom[k] == INVALID) return f;
    f.exact = measure(scene->vertices, p->hit.prim[k], p, k);
    f.prim = p->hit.prim[k];
    f.found = f.exact.t <= (double)limit;
    return f;
}


/* Settling a hit, as sortie.sim.exact.settle does (same rules, same operations): the hit goes
 * to the coincident face the ray enters, then to the lowest index; ``unsure`` marks a hit near
 * an edge of its triangle or of a coincident one (the caller casts it again, nudged). */
#define EDGE_BAND 1e-4

static double edge_gap(const Decider *f, int64_t tri, double u, double v) {
    const double *r = f->reach + 3 * tri;
    double w = 1.0 - u - v, a = u * r[0], b = v * r[1], c = w * r[2];
    double m = a < b ? a : b;
    return m < c ? m : c;
}

static int facing(const Decider *f, int64_t tri, const double d[3]) {
    const double *n = f->normal + 3 * tri;
    return n[0] * d[0] + n[1] * d[1] + n[2] * d[2] < 0;
}

typedef struct {
    int64_t rank, tri;
    Exact exact;
} Best;

/* Weigh the partners ``index[start[tri]:start[tri + 1]]`` of a hit at ``point``. */
static void weigh(const Decider *f, const int64_t *start, const int64_t *index, int64_t tri, const double o[3],
                  const double d[3], const double point[3], Best *best, int *unsure) {
    for (int64_t i = start[tri]; i < start[tri + 1]; i++) {
        int64_t other = index[i];
        const double *low = f->low + 3 * other, *high = f->high + 3 * other;
        int inside_box = 1;
        for (int axis = 0; axis < 3; axis++)
            inside_box &= low[axis] <= point[axis] && point[axis] <= high[axis];
        if (!inside_box) continue;
        const float *a = f->corners + 9 * other;
        Exact e = measure_corners(a, a + 3, a + 6, o, d);
        double gap = edge_gap(f, other, e.u, e.v);
        if (fabs(gap) <= EDGE_BAND) *unsure = 1;
        if (gap <= EDGE_BAND) continue;
        int64_t rank = (facing(f, other, d) ? 0 : 1) * f->count + other;
        if (rank < best->rank) {
            best->rank = rank;
            best->tri = other;
            best->exact = e;
        }
    }
}

/* Settle row ``row``'s hit (written by the caller from lane ``k``). */
static void settle_row(const Batch *b, const RayHit16 *p, int k, Py_ssize_t row) {
    const Decider *f = b->decider;
    int64_t tri = b->triangle[row];
    int unsure = 0;
    if (tri >= 0) {
        double o[3], d[3];
        lane_ray(p, k, o, d);
        unsure = edge_gap(f, tri, (double)b->u[row], (double)b->v[row]) <= EDGE_BAND;
        int front = facing(f, tri, d);
        double t = (double)b->t[row];
        double point[3] = {o[0] + t * d[0], o[1] + t * d[1], o[2] + t * d[2]};
        Best best = {(front ? 0 : 1) * f->count + tri, tri, {0.0, 0.0, 0.0}};
        weigh(f, f->same_start, f->same_index, tri, o, d, point, &best, &unsure);
        if (!front) weigh(f, f->opposite_start, f->opposite_index, tri, o, d, point, &best, &unsure);
        if (best.tri != tri) {
            b->triangle[row] = (int32_t)best.tri;
            b->t[row] = (float)best.exact.t;
            b->u[row] = (float)best.exact.u;
            b->v[row] = (float)best.exact.v;
        }
    }
    b->unsure[row] = (uint8_t)unsure;
}

/* Trace one packet of ``lanes`` rays at ``rows`` against both scenes and write the hits. The
 * dynamic scene's hit replaces the static one only when exactly nearer. */
static void trace_packet(const Batch *b, const Py_ssize_t *rows, int lanes) {
    RayHit16 p;
    float limit[16];
    Found fixed[16], moving[16];
    int valid[16], again[16], any_again = 0;
    for (int k = 0; k < 16; k++) {
        valid[k] = k < lanes ? -1 : 0;
        set_lane(&p, k, b, rows[k < lanes ? k : 0]);
        limit[k] = p.ray.tfar[k];
        p.ray.tfar[k] = grown(limit[k]);
        fixed[k].found = moving[k].found = 0;
    }
    if (b->fixed) {
        intersect(valid, b->fixed->handle, &p);
        for (int k = 0; k < lanes; k++) fixed[k] = found_in(b->fixed, &p, k, limit[k]);
    }
    if (b->moving) {
        for (int k = 0; k < 16; k++) {
            again[k] = valid[k] && (!b->dynamic_rows || b->dynamic_rows[rows[k < lanes ? k : 0]]) ? -1 : 0;
            any_again |= again[k];
            if (k < lanes && fixed[k].found) p.ray.tfar[k] = grown((float)fixed[k].exact.t);
            else p.ray.tfar[k] = grown(limit[k]);
            p.hit.geom[k] = INVALID;
        }
        if (any_again && may_meet(b->moving, &p, again)) {
            intersect(again, b->moving->handle, &p);
            for (int k = 0; k < lanes; k++)
                if (again[k]) moving[k] = found_in(b->moving, &p, k, limit[k]);
        }
    }
    for (int k = 0; k < lanes; k++) {
        Py_ssize_t row = rows[k];
        int dynamic = moving[k].found && (!fixed[k].found || moving[k].exact.t < fixed[k].exact.t);
        const Found *f = dynamic ? &moving[k] : &fixed[k];
        if (!f->found) {
            b->t[row] = INFINITY;
            b->triangle[row] = -1;
            b->u[row] = b->v[row] = 0.0f;
            continue;
        }
        b->t[row] = (float)f->exact.t;
        b->triangle[row] = (int32_t)f->prim + (dynamic ? b->offset : 0);
        b->u[row] = (float)f->exact.u;
        b->v[row] = (float)f->exact.v;
    }
    if (b->decider)
        for (int k = 0; k < lanes; k++) settle_row(b, &p, k, rows[k]);
}

/* Trace ``n`` rays: 4x4 pixel tiles when ``width`` > 0 (rows of an image), else runs of 16. */
static void trace_all(const Batch *b, Py_ssize_t n, Py_ssize_t width) {
    Py_ssize_t rows[16];
    if (width > 0 && n % width == 0) {
        Py_ssize_t height = n / width;
        for (Py_ssize_t y0 = 0; y0 < height; y0 += 4)
            for (Py_ssize_t x0 = 0; x0 < width; x0 += 4) {
                int lanes = 0;
                for (Py_ssize_t y = y0; y < y0 + 4 && y < height; y++)
                    for (Py_ssize_t x = x0; x < x0 + 4 && x < width; x++) rows[lanes++] = y * width + x;
                trace_packet(b, rows, lanes);
            }
        return;
    }
    for (Py_ssize_t start = 0; start < n; start += 16) {
        int lanes = 0;
        for (Py_ssize_t r = start; r < start + 16 && r < n; r++) rows[lanes++] = r;
        trace_packet(b, rows, lanes);
    }
}

/* Casting unsure rays again, as sortie.sim.raycast.RayCaster._retry and _remeasure do for
 * embreex (the same rules and operations, so the same bits): every unsure ray is traced again
 * from its origin moved by each of ``nudges`` in turn (runs of 16 in row order, both scenes,
 * settled), until the nudged ray is sure; the ray itself then takes the triangle the nudged
 * one found, measured along itself when that lies ahead of it and within ``tolerance`` of the
 * nudged hit point, else at that point. */
typedef struct {
    const float *offsets; /* ``count`` nudges of three floats */
    int count;
    double tolerance; /* metres: sortie.sim.exact.REMEASURE_TOLERANCE, passed in */
} Nudges;

/* A sum of three doubles in numpy's order for ``sum(axis=1)`` of an (N, 3) array: from 0.0,
 * left to right (the 0.0 makes a sum of negative zeros a positive one, as numpy's does). */
static double sum3(double a, double b, double c) { return ((0.0 + a) + b) + c; }

/* Write row ``row``'s hit from its nudged copy's (``nt``, ``ntri``, ``nu``, ``nv``), the ray
 * starting at ``start`` un-nudged. */
static void remeasure(const Batch *b, Py_ssize_t row, const float start[3], const float nudge[3], double tolerance,
                      float nt, int32_t ntri, float nu, float nv) {
    const float *dir = b->directions + 3 * row;
    double limit = b->tmax ? (double)b->tmax[row] : INFINITY;
    double t = INFINITY, u = 0.0, v = 0.0;
    if (ntri >= 0) {
        const float *a = b->decider->corners + 9 * (size_t)ntri;
        double o[3] = {start[0], start[1], start[2]}, d[3] = {dir[0], dir[1], dir[2]};
        Exact own = measure_corners(a, a + 3, a + 6, o, d);
        double shift = sum3((double)nudge[0] * d[0], (double)nudge[1] * d[1], (double)nudge[2] * d[2]) /
                       sum3(d[0] * d[0], d[1] * d[1], d[2] * d[2]);
        double seen = (double)nt + shift; /* the nudged hit point, on the ray; np.maximum(seen, 0.0): */
        if (!(seen > 0.0) && !isnan(seen)) seen = 0.0;
        int ahead = own.t >= 0 && fabs(own.t - seen) <= tolerance;
        t = ahead ? own.t : seen;
        u = ahead ? own.u : (double)nu;
        v = ahead ? own.v : (double)nv;
    }
    if (ntri >= 0 && t <= limit) {
        b->t[row] = (float)t;
        b->triangle[row] = ntri;
        b->u[row] = (float)u;
        b->v[row] = (float)v;
    } else {
        b->t[row] = INFINITY;
        b->triangle[row] = -1;
        b->u[row] = b->v[row] = 0.0f;
    }
}

/* Return the first row from ``row`` on whose mark is set (``n``: none). Marks are mostly sparse
 * (a frame's unsure pixels are a few in a thousand), so eight are skipped at once while clear. */
static Py_ssize_t next_marked(const uint8_t *marked, Py_ssize_t n, Py_ssize_t row) {
    for (uint64_t word; row + 8 <= n; row += 8) {
        memcpy(&word, marked + row, 8);
        if (word) break;
    }
    while (row < n && !marked[row]) row++;
    return row;
}

/* Return how many of the ``n`` marks are set. */
static Py_ssize_t count_marked(const uint8_t *marked, Py_ssize_t n) {
    Py_ssize_t m = 0;
    for (Py_ssize_t row = next_marked(marked, n, 0); row < n; row = next_marked(marked, n, row + 1)) m++;
    return m;
}

/* The rays left to nudge: their rows, un-nudged origins, directions and limits, and the
 * nudged copies' origins and hits; one allocation. */
typedef struct {
    Py_ssize_t *rows;
    float *starts, *origins, *directions, *limits, *t, *u, *v;
    int32_t *triangle;
    uint8_t *unsure;
    void *block;
} Retry;

static int retry_alloc(Retry *r, Py_ssize_t m) {
    size_t n = (size_t)m;
    char *p = malloc(n * (sizeof(Py_ssize_t) + 13 * sizeof(float) + sizeof(int32_t) + 1));
    if (p == NULL) return -1;
    r->block = p;
    r->rows = (Py_ssize_t *)p, p += n * sizeof(Py_ssize_t);
    r->starts = (float *)p, p += 3 * n * sizeof(float);
    r->origins = (float *)p, p += 3 * n * sizeof(float);
    r->directions = (float *)p, p += 3 * n * sizeof(float);
    r->limits = (float *)p, p += n * sizeof(float);
    r->t = (float *)p, p += n * sizeof(float);
    r->u = (float *)p, p += n * sizeof(float);
    r->v = (float *)p, p += n * sizeof(float);
    r->triangle = (int32_t *)p, p += n * sizeof(int32_t);
    r->unsure = (uint8_t *)p;
    return 0;
}

/* Keep entry ``i`` of the rays left as entry ``k`` (k <= i). */
static void retry_keep(Retry *r, Py_ssize_t i, Py_ssize_t k) {
    r->rows[k] = r->rows[i];
    r->limits[k] = r->limits[i];
    for (int j = 0; j < 3; j++) {
        r->starts[3 * k + j] = r->starts[3 * i + j];
        r->directions[3 * k + j] = r->directions[3 * i + j];
    }
}

/* Cast the rays of ``b`` it marked unsure again, nudged; return -1 when out of memory, else 0. */
static int retry(const Batch *b, Py_ssize_t n, const Nudges *nudges) {
    Py_ssize_t m = count_marked(b->unsure, n);
    if (m == 0 || nudges->count == 0) return 0;
    Retry r;
    if (retry_alloc(&r, m) < 0) return -1;
    m = 0;
    for (Py_ssize_t row = next_marked(b->unsure, n, 0); row < n; row = next_marked(b->unsure, n, row + 1)) {
        const float *origin = b->origins + (b->one_origin ? 0 : 3 * row);
        r.rows[m] = row;
        r.limits[m] = b->tmax ? b->tmax[row] : INFINITY;
        for (int j = 0; j < 3; j++) r.starts[3 * m + j] = origin[j], r.directions[3 * m + j] = b->directions[3 * row + j];
        m++;
    }
    Batch nudged = *b;
    nudged.origins = r.origins, nudged.directions = r.directions, nudged.tmax = b->tmax ? r.limits : NULL;
    nudged.dynamic_rows = NULL, nudged.one_origin = 0;
    nudged.t = r.t, nudged.triangle = r.triangle, nudged.u = r.u, nudged.v = r.v, nudged.unsure = r.unsure;
    for (int k = 0; k < nudges->count && m > 0; k++) {
        const float *nudge = nudges->offsets + 3 * k;
        for (Py_ssize_t i = 0; i < m; i++)
            for (int j = 0; j < 3; j++) r.origins[3 * i + j] = r.starts[3 * i + j] + nudge[j];
        trace_all(&nudged, m, 0);
        Py_ssize_t kept = 0;
        for (Py_ssize_t i = 0; i < m; i++) {
            remeasure(b, r.rows[i], r.starts + 3 * i, nudge, nudges->tolerance, r.t[i], r.triangle[i], r.u[i],
                      r.v[i]);
            if (r.unsure[i]) retry_keep(&r, i, kept++);
        }
        m = kept;
    }
    free(r.block);
    return 0;
}

/* Raise ValueError naming ``where`` and return 1 unless ``tolerance`` is a distance (NaN: not given). */
static int refuse_tolerance(const char *where, double tolerance) {
    if (tolerance >= 0.0) return 0;
    char text[120];
    snprintf(text, sizeof text, "%s: nudges with a tolerance of %g; allowed: metres >= 0", where, tolerance);
    PyErr_SetString(PyExc_ValueError, text);
    return 1;
}

static Scene *scene_of(PyObject *capsule) {
    if (capsule == Py_None) return NULL;
    return PyCapsule_GetPointer(capsule, "sortie.embree.scene");
}

/* trace(static, dynamic, offset, origins, directions, tmax, dynamic_rows, width, t, triangle, u, v
 *       [, decider, unsure, nudges, tolerance])
 * origins: float32 (N, 3), or (1, 3) for one origin of every ray; directions: float32 (N, 3); tmax: float32 (N,) or None; dynamic_rows: uint8 (N,) or
 * None (which rays also meet the dynamic scene); outputs: float32/int32 (N,), written. With a decider, each hit is
 * settled and ``unsure`` (uint8 (N,)) marks the rays that met an edge; with ``nudges`` too (float32 (K, 3)) and
 * ``tolerance`` (metres), those rays are cast again, nudged, before returning (``retry``). */
static PyObject *trace(PyObject *self, PyObject *args) {
    PyObject *fixed, *moving, *tmax_obj, *rows_obj, *decider_obj = Py_None, *unsure_obj = Py_None, *nudges_obj = Py_None;
    int offset, short_of_memory = 0;
    Py_ssize_t width;
    double tolerance = NAN;
    Py_buffer o, d, t, tri, u, v, tmax = {0}, rows = {0}, unsure = {0}, nudges = {0};
    if (!PyArg_ParseTuple(args, "OOiy*y*OOnw*w*w*w*|OOOd", &fixed, &moving, &offset, &o, &d, &tmax_obj, &rows_obj,
                          &width, &t, &tri, &u, &v, &decider_obj, &unsure_obj, &nudges_obj, &tolerance))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = t.len / (Py_ssize_t)sizeof(float);
    Batch b = {0};
    b.fixed = scene_of(fixed);
    b.moving = scene_of(moving);
    if (PyErr_Occurred()) goto done;
    if (tmax_obj != Py_None && PyObject_GetBuffer(tmax_obj, &tmax, PyBUF_C_CONTIGUOUS) < 0) goto done;
    if (rows_obj != Py_None && PyObject_GetBuffer(rows_obj, &rows, PyBUF_C_CONTIGUOUS) < 0) goto done;
    if (decider_obj != Py_None) {
        b.decider = PyCapsule_GetPointer(decider_obj, "sortie.embree.decider");
        if (b.decider == NULL) goto done;
        if (unsure_obj == Py_None || PyObject_GetBuffer(unsure_obj, &unsure, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "trace: a decider needs an unsure buffer");
            goto done;
        }
        if (unsure.len != n) {
            PyErr_SetString(PyExc_ValueError, "trace: the unsure buffer does not match the ray count");
            goto done;
        }
        b.unsure = unsure.buf;
    }
    if (nudges_obj != Py_None) {
        if (b.decider == NULL || PyObject_GetBuffer(nudges_obj, &nudges, PyBUF_C_CONTIGUOUS) < 0) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "trace: nudges given without a decider; allowed: nudges with a "
                                                  "decider and an unsure buffer, or neither");
            goto done;
        }
        if (nudges.len % (3 * (Py_ssize_t)sizeof(float))) {
            PyErr_Format(PyExc_ValueError, "trace: nudges of %zd bytes; allowed: float32 (K, 3)", nudges.len);
            goto done;
        }
        if (refuse_tolerance("trace", tolerance)) goto done;
    }
    if ((o.len != 3 * t.len && o.len != 3 * (Py_ssize_t)sizeof(float)) || d.len != 3 * t.len || tri.len != t.len || u.len != t.len || v.len != t.len ||
        (tmax.obj && tmax.len != t.len) || (rows.obj && rows.len != n)) {
        PyErr_SetString(PyExc_ValueError, "trace: buffer sizes do not match the ray count");
        goto done;
    }
    b.origins = o.buf;
    b.one_origin = o.len != 3 * t.len;
    b.directions = d.buf;
    b.tmax = tmax.obj ? tmax.buf : NULL;
    b.dynamic_rows = rows.obj ? rows.buf : NULL;
    b.t = t.buf;
    b.triangle = tri.buf;
    b.u = u.buf;
    b.v = v.buf;
    b.offset = offset;
    Nudges moves = {nudges.buf, nudges.obj ? (int)(nudges.len / (3 * (Py_ssize_t)sizeof(float))) : 0, tolerance};
    Py_BEGIN_ALLOW_THREADS trace_all(&b, n, width);
    if (moves.count) short_of_memory = retry(&b, n, &moves) < 0;
    Py_END_ALLOW_THREADS if (short_of_memory) {
        PyErr_NoMemory();
        goto done;
    }
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&o);
    PyBuffer_Release(&d);
    PyBuffer_Release(&t);
    PyBuffer_Release(&tri);
    PyBuffer_Release(&u);
    PyBuffer_Release(&v);
    if (tmax.obj) PyBuffer_Release(&tmax);
    if (rows.obj) PyBuffer_Release(&rows);
    if (unsure.obj) PyBuffer_Release(&unsure);
    if (nudges.obj) PyBuffer_Release(&nudges);
    return result;
}

/* Cast the rays of the ``marked`` pixels of a camera frame from its eye, as the ray caster's
 * cast does (one origin, runs of 16 in row order, settled, the unsure ones cast again nudged),
 * and write their hits at their rows of the frame's arrays. ``rays`` are the frame's
 * directions (N, 3), or with ``pitched`` its rows x, y, z at zero yaw (3, N), turned here by
 * cosine ``c`` and sine ``s`` with sortie.sim.camera's float32 operations (c x - s y, s x + c y,
 * z). Returns how many rays were cast, or -1 when out of memory. */
typedef struct {
    Batch batch; /* origin, decider, scenes; its directions and outputs are filled here */
    const float *rays;
    const uint8_t *marked;
    Py_ssize_t n;
    int pitched;
    float c, s;
    float *t, *u, *v; /* the frame's, (N,) */
    int32_t *triangle;
} Pixels;

static Py_ssize_t cast_pixels_in(Pixels *px, const Nudges *nudges) {
    Py_ssize_t m = count_marked(px->marked, px->n), n = px->n, i = 0;
    if (m == 0) return 0;
    Retry r; /* its rows, directions and hits; the rest goes unused */
    if (retry_alloc(&r, m) < 0) return -1;
    for (Py_ssize_t row = next_marked(px->marked, n, 0); row < n; row = next_marked(px->marked, n, row + 1)) {
        float *d = r.directions + 3 * i;
        r.rows[i++] = row;
        if (px->pitched) {
            float x = px->rays[row], y = px->rays[n + row], cx = px->c * x, sy = px->s * y, sx = px->s * x, cy = px->c * y;
            d[0] = cx - sy, d[1] = sx + cy, d[2] = px->rays[2 * n + row];
        } else {
            d[0] = px->rays[3 * row], d[1] = px->rays[3 * row + 1], d[2] = px->rays[3 * row + 2];
        }
    }
    Batch *b = &px->batch;
    b->directions = r.directions, b->t = r.t, b->u = r.u, b->v = r.v, b->triangle = r.triangle, b->unsure = r.unsure;
    b->one_origin = 1, b->tmax = NULL, b->dynamic_rows = NULL;
    trace_all(b, m, 0);
    int failed = retry(b, m, nudges) < 0;
    for (i = 0; i < m && !failed; i++) {
        Py_ssize_t row = r.rows[i];
        px->t[row] = r.t[i], px->u[row] = r.u[i], px->v[row] = r.v[i], px->triangle[row] = r.triangle[i];
    }
    free(r.block);
    return failed ? -1 : m;
}

/* cast_pixels(static, dynamic, offset, origin, rays, pitched, c, s, marked, t, triangle, u, v, decider, nudges,
 *             tolerance) -> how many were cast. origin: float32 (3,); rays: float32 (N, 3), or (3, N) when pitched;
 * marked: uint8 (N,); t, triangle, u, v: the frame's float32/int32 (N,), written at the marked rows; nudges: float32
 * (K, 3); tolerance: metres (``trace``'s). */
static PyObject *cast_pixels(PyObject *self, PyObject *args) {
    PyObject *fixed, *moving, *decider_obj;
    int offset, pitched;
    double c, s, tolerance;
    Py_buffer o, rays, marked, t, tri, u, v, nudges;
    if (!PyArg_ParseTuple(args, "OOiy*y*pddy*w*w*w*w*Oy*d", &fixed, &moving, &offset, &o, &rays, &pitched, &c, &s,
                          &marked, &t, &tri, &u, &v, &decider_obj, &nudges, &tolerance))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = marked.len;
    Pixels px = {{0}};
    px.batch.fixed = scene_of(fixed);
    px.batch.moving = scene_of(moving);
    if (PyErr_Occurred()) goto done;
    if (decider_obj == Py_None) {
        PyErr_SetString(PyExc_ValueError, "cast_pixels: got no decider; allowed: a capsule from new_decider");
        goto done;
    }
    px.batch.decider = PyCapsule_GetPointer(decider_obj, "sortie.embree.decider");
    if (px.batch.decider == NULL) goto done;
    if (o.len != 3 * (Py_ssize_t)sizeof(float) || rays.len != 3 * n * (Py_ssize_t)sizeof(float) ||
        t.len != n * (Py_ssize_t)sizeof(float) || tri.len != t.len || u.len != t.len || v.len != t.len ||
        nudges.len % (3 * (Py_ssize_t)sizeof(float))) {
        PyErr_Format(PyExc_ValueError,
                     "cast_pixels: got an origin of %zd bytes, rays of %zd, %zd marks, hits of %zd, %zd, %zd and %zd "
                     "bytes, nudges of %zd; allowed: 3 float32, 3N float32, N marks, N float32/int32 each, "
                     "float32 (K, 3)",
                     o.len, rays.len, n, t.len, tri.len, u.len, v.len, nudges.len);
        goto done;
    }
    if (refuse_tolerance("cast_pixels", tolerance)) goto done;
    px.batch.origins = o.buf, px.batch.offset = offset;
    px.rays = rays.buf, px.marked = marked.buf, px.n = n, px.pitched = pitched, px.c = (float)c, px.s = (float)s;
    px.t = t.buf, px.triangle = tri.buf, px.u = u.buf, px.v = v.buf;
    Nudges moves = {nudges.buf, (int)(nudges.len / (3 * (Py_ssize_t)sizeof(float))), tolerance};
    Py_ssize_t cast;
    Py_BEGIN_ALLOW_THREADS cast = cast_pixels_in(&px, &moves);
    Py_END_ALLOW_THREADS if (cast < 0) PyErr_NoMemory();
    else result = PyLong_FromSsize_t(cast);
done:
    PyBuffer_Release(&o), PyBuffer_Release(&rays), PyBuffer_Release(&marked), PyBuffer_Release(&t);
    PyBuffer_Release(&tri), PyBuffer_Release(&u), PyBuffer_Release(&v), PyBuffer_Release(&nudges);
    return result;
}

/* out[r] = sum over k of a[r][k] * b[k], from 0.0, adding k = 0 .. width - 1: the order of
 * sortie.sim.linear.product (numpy's einsum), so the bits are the same. */
static void affine(const double *a, const double *b, size_t rows, int width, float *out) {
    for (size_t r = 0; r < rows; r++)
        for (int m = 0; m < 3; m++) {
            double sum = 0.0;
            for (int k = 0; k < width; k++) sum = sum + a[r * width + k] * b[3 * k + m];
            out[3 * r + m] = (float)sum;
        }
}

/* A body's probe rays from its layout and the move's frame (sortie.sim.bodies.walker_rays):
 * origins = layout origins (N, 5) @ frame (5, 3), directions = layout directions (N, 3) @
 * frame[:3], in double, rounded once to float; tmax[i] = lead[i] + add for the sweep rays. */
static PyObject *probe_rays(PyObject *self, PyObject *args) {
    Py_buffer lo, ld, frame, lead, o, d, tmax;
    double add;
    if (!PyArg_ParseTuple(args, "y*y*y*y*dw*w*w*", &lo, &ld, &frame, &lead, &add, &o, &d, &tmax)) return NULL;
    size_t n = (size_t)lo.len / (5 * sizeof(double)), sweep = (size_t)lead.len / sizeof(double);
    PyObject *result = NULL;
    if ((size_t)lo.len != 5 * n * sizeof(double) || (size_t)ld.len != 3 * n * sizeof(double) ||
        frame.len != 15 * (Py_ssize_t)sizeof(double) || (size_t)o.len != 3 * n * sizeof(float) ||
        (size_t)d.len != 3 * n * sizeof(float) || (size_t)tmax.len != n * sizeof(float) || sweep > n) {
        PyErr_SetString(PyExc_ValueError, "probe_rays: expected layouts (N, 5) and (N, 3) float64, a (5, 3) frame, "
                                          "lead of at most N, outputs (N, 3), (N, 3) and (N,) float32");
        goto done;
    }
    affine(lo.buf, frame.buf, n, 5, o.buf);
    affine(ld.buf, frame.buf, n, 3, d.buf);
    for (size_t i = 0; i < sweep; i++) ((float *)tmax.buf)[i] = (float)(((const double *)lead.buf)[i] + add);
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&lo), PyBuffer_Release(&ld), PyBuffer_Release(&frame), PyBuffer_Release(&lead);
    PyBuffer_Release(&o), PyBuffer_Release(&d), PyBuffer_Release(&tmax);
    return result;
}

/* What a walker's probe found, read as sortie.sim.bodies.walker reads it in Python: the same
 * arithmetic (float32 where numpy computes in float32, double elsewhere), so the same answers.
 * ``normal`` and ``object_id`` are the triangle table's, whose last row is "no hit". */
typedef struct {
    const float *t, *normal;
    const int32_t *tri, *object_id;
    size_t rows; /* of the table, the "no hit" row included */
} ProbeHits;

static const float *hit_normal(const ProbeHits *h, size_t k) {
    size_t row = h->tri[k] < 0 ? h->rows - 1 : (size_t)h->tri[k];
    return h->normal + 3 * row;
}

/* The sweep: the nearest wall ahead (a face not flat enough to walk on, seen from the front),
 * its distance past the lead, its normal's x and y, its object id; (inf, 0, 0, 0) if none. */
static PyObject *read_sweep(const ProbeHits *h, const double *lead, size_t sweep, double ux, double uy, double cos_slope) {
    float fux = (float)ux, fuy = (float)uy, fcos = (float)cos_slope;
    double best = INFINITY;
    size_t j = 0;
    for (size_t k = 0; k < sweep; k++) {
        const float *n = hit_normal(h, k);
        float facing = n[0] * fux + n[1] * fuy;
        double t = (n[2] < fcos && facing < 0) ? (double)h->t[k] - lead[k] : INFINITY;
        if (t < best) best = t, j = k;
    }
    if (!isfinite(best)) return Py_BuildValue("(dddi)", INFINITY, 0.0, 0.0, 0);
    const float *n = hit_normal(h, j);
    return Py_BuildValue("(dddi)", best, (double)n[0], (double)n[1], (int)h->object_id[h->tri[j]]);
}

/* The ground under each sample: the feet height (nan where the walker may not stand) and the
 * object id of what leaves too little headroom (0: none). ``shape``: feet, base offset,
 * height, cos_slope, flat. */
static int read_ground(const ProbeHits *h, size_t sweep, int samples, int per_sample, const double shape[5],
                       PyObject *ground, PyObject *ceiling) {
    double feet = shape[0], base = feet + shape[1], height = shape[2], cos_slope = shape[3], flat = shape[4];
    for (int s = 0; s < samples; s++) {
        size_t row = sweep + (size_t)s * per_sample;
        double under = base - (double)h->t[row], nz = hit_normal(h, row)[2];
        if (fabs(under - feet) < flat) under = feet;
        double z = (nz >= cos_slope || (nz > 0 && under <= feet)) ? under : NAN;
        double room = z + height - flat - base, lowest = INFINITY;
        for (int k = 1; k < per_sample; k++) lowest = lowest < h->t[row + k] ? lowest : (double)h->t[row + k];
        int blocker = 0;
        if (lowest < room) { /* rare: something overhead; only undersides seen from below count */
            double nearest = INFINITY;
            for (int k = 1; k < per_sample; k++) {
                double t = h->t[row + k];
                if (hit_normal(h, row + k)[2] < 0 && t < room && t < nearest) nearest = t, blocker = h->object_id[h->tri[row + k]];
            }
        }
        PyObject *g = PyFloat_FromDouble(blocker ? NAN : z), *c = PyLong_FromLong(blocker);
        if (g == NULL || c == NULL || PyList_Append(ground, g) < 0 || PyList_Append(ceiling, c) < 0) {
            Py_XDECREF(g), Py_XDECREF(c);
            return 0;
        }
        Py_DECREF(g), Py_DECREF(c);
    }
    return 1;
}

/* probe_read(t, triangle, normal, object_id, lead, ux, uy, feet, base, height, cos_slope, flat,
 * samples, per_sample) -> ((free, nx, ny, obstacle), ground, ceiling) */
static PyObject *probe_read(PyObject *self, PyObject *args) {
    Py_buffer t, tri, normal, ids, lead;
    double ux, uy, shape[5];
    int samples, per_sample;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*dddddddii", &t, &tri, &normal, &ids, &lead, &ux, &uy, &shape[0], &shape[1],
                          &shape[2], &shape[3], &shape[4], &samples, &per_sample))
        return NULL;
    PyObject *result = NULL, *sweep = NULL, *ground = NULL, *ceiling = NULL;
    size_t n = (size_t)t.len / sizeof(float), rows = (size_t)normal.len / (3 * sizeof(float));
    size_t swept = (size_t)lead.len / sizeof(double);
    if ((size_t)tri.len != n * sizeof(int32_t) || (size_t)ids.len != rows * sizeof(int32_t) || rows == 0 ||
        samples < 0 || per_sample < 2 || swept + (size_t)samples * per_sample != n) {
        PyErr_SetString(PyExc_ValueError, "probe_read: expected hits of the probe's length, a table's normals and ids, "
                                          "and as many rays as the sweep and the samples make");
        goto done;
    }
    for (size_t k = 0; k < n; k++)
        if (((const int32_t *)tri.buf)[k] >= (int32_t)rows - 1 || ((const int32_t *)tri.buf)[k] < -1) {
            PyErr_Format(PyExc_ValueError, "probe_read: triangle %d of ray %zu is not in the table", ((const int32_t *)tri.buf)[k], k);
            goto done;
        }
    ProbeHits h = {t.buf, normal.buf, tri.buf, ids.buf, rows};
    sweep = read_sweep(&h, lead.buf, swept, ux, uy, shape[3]);
    ground = PyList_New(0), ceiling = PyList_New(0);
    if (sweep != NULL && ground != NULL && ceiling != NULL && read_ground(&h, swept, samples, per_sample, shape, ground, ceiling))
        result = PyTuple_Pack(3, sweep, ground, ceiling);
done:
    Py_XDECREF(sweep), Py_XDECREF(ground), Py_XDECREF(ceiling);
    PyBuffer_Release(&t), PyBuffer_Release(&tri), PyBuffer_Release(&normal), PyBuffer_Release(&ids), PyBuffer_Release(&lead);
    return result;
}

/* plane_pairs(label: int64 (T,), low: float64 (T, 3), high: float64 (T, 3)) -> int64 bytes
 * of (i, j) pairs, i < j: the rows of one label whose boxes overlap on every axis (y, z, x),
 * rows sorted by label, then by low x. What sortie.sim.exact._overlapping_in_plane finds in
 * numpy (candidates by a search of the sorted x, then one axis at a time), in the same order:
 * by i, then by j. */
static PyObject *plane_pairs(PyObject *self, PyObject *args) {
    Py_buffer label, low, high;
    if (!PyArg_ParseTuple(args, "y*y*y*", &label, &low, &high)) return NULL;
    PyObject *result = NULL;
    size_t n = (size_t)label.len / sizeof(int64_t), count = 0, capacity = 4096;
    int64_t *pairs = NULL;
    if ((size_t)label.len != n * sizeof(int64_t) || (size_t)low.len != 3 * n * sizeof(double) ||
        (size_t)high.len != 3 * n * sizeof(double)) {
        PyErr_SetString(PyExc_ValueError, "plane_pairs: expected T int64 labels and (T, 3) float64 lows and highs");
        goto done;
    }
    const int64_t *lab = label.buf;
    const double *lo = low.buf, *hi = high.buf;
    pairs = PyMem_Malloc(2 * capacity * sizeof(int64_t));
    if (pairs == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        const double *li = lo + 3 * i, *hi_i = hi + 3 * i;
        for (size_t j = i + 1; j < n && lab[j] == lab[i] && lo[3 * j] <= hi_i[0]; j++) {
            const double *lj = lo + 3 * j, *hj = hi + 3 * j;
            if (!(li[1] <= hj[1] && lj[1] <= hi_i[1] && li[2] <= hj[2] && lj[2] <= hi_i[2] && li[0] <= hj[0]))
                continue;
            if (count == capacity) {
                int64_t *grown = PyMem_Realloc(pairs, 4 * capacity * sizeof(int64_t));
                if (grown == NULL) {
                    PyErr_NoMemory();
                    goto done;
                }
                pairs = grown, capacity *= 2;
            }
            pairs[2 * count] = (int64_t)i, pairs[2 * count + 1] = (int64_t)j, count++;
        }
    }
    result = PyBytes_FromStringAndSize((const char *)pairs, (Py_ssize_t)(2 * count * sizeof(int64_t)));
done:
    PyMem_Free(pairs);
    PyBuffer_Release(&label), PyBuffer_Release(&low), PyBuffer_Release(&high);
    return result;
}

static int compare_int64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* partner_rows(count, owner: int64 (P,), other: int64 (P,)) -> (start, index): int64
 * bytearrays, start (count + 1,) where each triangle's list begins, index (P,) the others of
 * each owner in increasing order: sortie.sim.exact.Partners.of_pairs (a lexsort by owner, then
 * other) by counting the owners and sorting each (short) list. */
static PyObject *partner_rows(PyObject *self, PyObject *args) {
    Py_ssize_t count;
    Py_buffer owner, other;
    if (!PyArg_ParseTuple(args, "ny*y*", &count, &owner, &other)) return NULL;
    PyObject *result = NULL, *start = NULL, *index = NULL;
    Py_ssize_t pairs = owner.len / (Py_ssize_t)sizeof(int64_t);
    if (count < 0 || owner.len != pairs * (Py_ssize_t)sizeof(int64_t) || other.len != owner.len) {
        PyErr_SetString(PyExc_ValueError, "partner_rows: expected a count >= 0 and owner, other (P,) int64");
        goto done;
    }
    const int64_t *own = owner.buf, *oth = other.buf;
    for (Py_ssize_t k = 0; k < pairs; k++)
        if (own[k] < 0 || own[k] >= count) {
            PyErr_Format(PyExc_ValueError, "partner_rows: owner %lld of pair %zd is not in 0..%zd", (long long)own[k], k,
                         count - 1);
            goto done;
        }
    start = PyByteArray_FromStringAndSize(NULL, (count + 1) * (Py_ssize_t)sizeof(int64_t));
    index = PyByteArray_FromStringAndSize(NULL, pairs * (Py_ssize_t)sizeof(int64_t));
    if (start == NULL || index == NULL) goto done;
    int64_t *first = (int64_t *)PyByteArray_AS_STRING(start), *list = (int64_t *)PyByteArray_AS_STRING(index);
    memset(first, 0, (size_t)(count + 1) * sizeof(int64_t));
    for (Py_ssize_t k = 0; k < pairs; k++) first[own[k] + 1]++;
    for (Py_ssize_t t = 0; t < count; t++) first[t + 1] += first[t];
    for (Py_ssize_t k = 0; k < pairs; k++) list[first[own[k]]++] = oth[k]; /* each start moves to its end */
    for (Py_ssize_t t = count; t > 0; t--) first[t] = first[t - 1];        /* and back */
    first[0] = 0;
    for (Py_ssize_t t = 0; t < count; t++) {
        int64_t a = first[t], b = first[t + 1];
        if (b - a > 16) {
            qsort(list + a, (size_t)(b - a), sizeof(int64_t), compare_int64);
            continue;
        }
        for (int64_t k = a + 1; k < b; k++) {
            int64_t v = list[k], m = k;
            for (; m > a && list[m - 1] > v; m--) list[m] = list[m - 1];
            list[m] = v;
        }
    }
    result = PyTuple_Pack(2, start, index);
done:
    Py_XDECREF(start), Py_XDECREF(index);
    PyBuffer_Release(&owner), PyBuffer_Release(&other);
    return result;
}

static PyMethodDef methods[] = {
    {"probe_read", probe_read, METH_VARARGS, "probe_read(t, triangle, normal, object_id, lead, ux, uy, feet, base, height, cos_slope, flat, samples, per_sample)."},
    {"probe_rays", probe_rays, METH_VARARGS, "probe_rays(layout_origins, layout_directions, frame, lead, add, origins, directions, tmax)."},
    {"partner_rows", partner_rows, METH_VARARGS, "partner_rows(count, owner, other) -> (start, index): the partner lists as compressed rows."},
    {"plane_pairs", plane_pairs, METH_VARARGS, "plane_pairs(label, low, high): int64 bytes of the (i, j) pairs of one label whose boxes overlap."},
    {"load", load, METH_VARARGS, "load(path, config): open libembree4 at path and create a device with that config."},
    {"new_scene", new_scene, METH_VARARGS, "new_scene(corners): a committed scene of (T, 3, 3) float32 triangles."},
    {"new_decider", new_decider, METH_VARARGS, "new_decider(corners, normal, reach, low, high, same_start, same_index, opposite_start, opposite_index)."},
    {"packet_width", packet_width, METH_VARARGS, "packet_width([lanes]): lanes per Embree call (8 or 16 sets it)."},
    {"cast_pixels", cast_pixels, METH_VARARGS, "cast_pixels(static, dynamic, offset, origin, rays, pitched, c, s, marked, t, tri, u, v, decider, nudges, tolerance)."},
    {"trace", trace, METH_VARARGS, "trace(static, dynamic, offset, origins, directions, tmax, rows, width, t, tri, u, v[, decider, unsure, nudges, tolerance])."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_packets", "Embree packet tracing.", -1, methods};

PyMODINIT_FUNC PyInit__packets(void) { return PyModule_Create(&module); }
