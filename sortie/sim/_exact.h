/* Where a ray meets a triangle, in double precision: the distance ``t`` and barycentrics.
 *
 * Shared by the packet tracer (_packets.c) and the camera's rasteriser (_raster.c), so that a
 * hit measured by either has the same bits.
 *
 * Embree's own t, u, v are float32 and their last bits depend on the kernels it picks for the
 * CPU (SSE, AVX2, AVX-512 use other approximations and other orders). Measured again here with
 * one fixed sequence of IEEE double operations (Moeller-Trumbore, no fused multiply-add: the
 * build passes -ffp-contract=off), the same triangle gives the same numbers on every x86-64 CPU.
 * sortie.sim.exact.exact_hits is the same formula in numpy, operation for operation. */
#ifndef SORTIE_EXACT_H
#define SORTIE_EXACT_H

typedef struct {
    double t, u, v;
} Exact;

static inline Exact measure_corners(const float *a, const float *b, const float *c, const double o[3], const double d[3]) {
    double ox = o[0], oy = o[1], oz = o[2], dx = d[0], dy = d[1], dz = d[2];
    double ax = a[0], ay = a[1], az = a[2];
    double e1x = (double)b[0] - ax, e1y = (double)b[1] - ay, e1z = (double)b[2] - az;
    double e2x = (double)c[0] - ax, e2y = (double)c[1] - ay, e2z = (double)c[2] - az;
    double px = dy * e2z - dz * e2y, py = dz * e2x - dx * e2z, pz = dx * e2y - dy * e2x;
    double det = e1x * px + e1y * py + e1z * pz;
    double sx = ox - ax, sy = oy - ay, sz = oz - az;
    double qx = sy * e1z - sz * e1y, qy = sz * e1x - sx * e1z, qz = sx * e1y - sy * e1x;
    Exact hit;
    hit.u = (sx * px + sy * py + sz * pz) / det;
    hit.v = (dx * qx + dy * qy + dz * qz) / det;
    hit.t = (e2x * qx + e2y * qy + e2z * qz) / det;
    return hit;
}

#endif
