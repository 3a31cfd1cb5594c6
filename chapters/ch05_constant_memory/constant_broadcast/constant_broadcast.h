// Exercise ch05 / constant_broadcast: a calibration curve that is a global polynomial (every
// thread reads the same coefficient at the same time: constant memory broadcasts it) plus a
// piecewise cubic whose segment each element picks from its own value (the threads of a warp
// read up to 32 different segments: constant memory serialises them, so that table belongs
// somewhere else).
//
// Frozen API: the tests and the benchmark call exactly this.
//
// The curve, for one input value x:
//   P(x) = p[0] + p[1] x + ... + p[7] x^7, evaluated by Horner's rule with fused multiply-adds:
//          P = p[7]; then for k = 6 down to 0: P = fmaf(P, x, p[k]).
//   u = 256 * x (exact in float); s = floor(u) clamped to [0, 255]; t = u - s (so t is in
//   [0, 1) for x in [0, 1), and falls outside it for x outside: the end segments extend);
//   R(x) = fmaf(fmaf(fmaf(a[3], t, a[2]), t, a[1]), t, a[0]) with a = segments[s].
//   y = P(x) + R(x).
// The tests compare with a CPU reference in that order, within a relative tolerance of 1e-5
// (plus 1e-5 absolute); a different order of the same operations passes, a wrong segment does
// not.
#pragma once

#include <cuda_runtime.h>

constexpr int kConstantBroadcastTerms = 8;       // p[0] .. p[7]
constexpr int kConstantBroadcastSegments = 256;  // segments of width 1/256 over [0, 1)

struct ConstantBroadcastCurve {
  float polynomial[kConstantBroadcastTerms];      // p[k]: coefficient of x^k
  float segments[kConstantBroadcastSegments][4];  // segments[s][k]: coefficient of t^k
};

// Makes `curve` (host memory) the curve every later constant_broadcast call evaluates; it
// may be called again with another curve, and the calls after that must use the new one.
// The caller never calls it while a constant_broadcast call may still be running (it
// synchronises first). It returns once the curve is in place on the device: a
// constant_broadcast launched afterwards on any stream, including a non-blocking one, must
// see it, and the caller may then reuse `curve`.
// Where each part lives on the device is part of the grade. The polynomial's coefficients
// belong in __constant__ memory: the technique rule constant_polynomial awards its points only
// to a kernel that reads __constant__ data (constant bank 3; kernel parameters sit in another
// bank and do not count). Where the segment table goes is yours to choose (shared memory,
// global memory read through the read-only path, ...), as long as it leaves constant memory:
// that is what the benchmark's speedup measures.
void constant_broadcast_set_curve(const ConstantBroadcastCurve& curve);

// y[i] = the curve above at x[i], for 0 <= i < n, with the curve last set by
// constant_broadcast_set_curve. x and y are device pointers to float-aligned memory that do
// not overlap; every x[i] lies in [-1, 2]. 0 <= n < 2^31; n = 0 does nothing. Nothing outside
// y[0, n) may be written, and x must not be modified.
// The work is enqueued on `stream`; the function returns without waiting for it.
void constant_broadcast(const float* x, float* y, int n, cudaStream_t stream);
