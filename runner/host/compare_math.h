// The per-element arithmetic of the runner's checks, shared by the host
// (output_compare.cc, run_checks.cc: the specification, tested in CI) and
// the device (runner/device/check_kernels.cu: the same functions on the
// GPU, so a large output is never copied to the host to be judged).
//
//  - OutputErrors: a kernel's output against the fp64 golden result;
//  - RunDiff: a trial's two runs of the same inputs against each other;
//  - ChecksumWord: one 32-bit word's term of an input's keyed checksum.
//
// Each accumulator is plain data (no constructors, so the device can hold
// arrays of it in shared memory); start from the Zero* functions. Merging
// is associative, so a reduction in any grouping gives the same counts,
// maxima and first index as the sequential loop; only the fp64 sums may
// differ in their last bits.
//
// Thread safety: pure functions.
#ifndef KBENCH_RUNNER_HOST_COMPARE_MATH_H_
#define KBENCH_RUNNER_HOST_COMPARE_MATH_H_

#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define KB_HD __host__ __device__
#else
#define KB_HD
#endif

namespace kbench {

// Figures of one output against its golden result.
struct OutputErrors {
  double max_abs;      // max |out - ref|; +inf with a non-finite out.
  double max_rel;      // max |out - ref| / max(|ref|, atol).
  double diff_sq;      // sum (out - ref)^2; +inf with a non-finite out.
  double ref_sq;       // sum ref^2.
  int64_t mismatches;  // Elements outside atol + rtol * |ref|.
  int64_t nans;        // NaN elements of out (unwritten, or computed).
  int64_t first;       // Index of the first mismatch, -1 for none.
};

// A trial's second run against its first.
struct RunDiff {
  double max_abs;   // max |a - b| over elements both runs wrote.
  int64_t differ;   // Elements outside the tolerance of each other.
  int64_t nan_one;  // Of those, elements NaN in one run only.
  int64_t first;    // Index of the first differing element, -1 none.
};

KB_HD inline OutputErrors ZeroOutputErrors() {
  OutputErrors e;
  e.max_abs = 0;
  e.max_rel = 0;
  e.diff_sq = 0;
  e.ref_sq = 0;
  e.mismatches = 0;
  e.nans = 0;
  e.first = -1;
  return e;
}

KB_HD inline RunDiff ZeroRunDiff() {
  RunDiff d;
  d.max_abs = 0;
  d.differ = 0;
  d.nan_one = 0;
  d.first = -1;
  return d;
}

// std::max's rule (a NaN `b` leaves `a`), on host and device alike.
KB_HD inline double MaxKeep(double a, double b) { return a < b ? b : a; }

// The smaller index, -1 meaning none.
KB_HD inline int64_t FirstIndex(int64_t a, int64_t b) {
  if (a < 0) return b;
  if (b < 0) return a;
  return a < b ? a : b;
}

// Adds element `i`: output `o` against golden `r`.
KB_HD inline void AddOutputError(double o, double r, int64_t i, double atol,
                                 double rtol, OutputErrors* e) {
  e->ref_sq += r * r;
  if (!std::isfinite(o)) {
    if (std::isnan(o)) ++e->nans;
    ++e->mismatches;
    if (e->first < 0) e->first = i;
    e->max_abs = INFINITY;
    e->max_rel = INFINITY;
    e->diff_sq = INFINITY;
    return;
  }
  const double d = std::fabs(o - r);
  e->max_abs = MaxKeep(e->max_abs, d);
  e->max_rel = MaxKeep(e->max_rel, d / MaxKeep(std::fabs(r), atol));
  e->diff_sq += d * d;
  if (!(d <= atol + rtol * std::fabs(r))) {
    ++e->mismatches;
    if (e->first < 0) e->first = i;
  }
}

// Merges `b` (elements after or beside `a`'s) into `a`.
KB_HD inline void MergeOutputErrors(const OutputErrors& b, OutputErrors* a) {
  a->max_abs = MaxKeep(a->max_abs, b.max_abs);
  a->max_rel = MaxKeep(a->max_rel, b.max_rel);
  a->diff_sq += b.diff_sq;
  a->ref_sq += b.ref_sq;
  a->mismatches += b.mismatches;
  a->nans += b.nans;
  a->first = FirstIndex(a->first, b.first);
}

// Adds element `i`: first run `a`, second run `b`.
KB_HD inline void AddRunDiff(double a, double b, int64_t i, double atol,
                             double rtol, RunDiff* d) {
  const bool na = std::isnan(a), nb = std::isnan(b);
  if (na && nb) return;  // Both unwritten: the comparison reports it.
  if (na != nb) {
    ++d->nan_one;
    ++d->differ;
    if (d->first < 0) d->first = i;
    return;
  }
  const double diff = std::fabs(a - b);
  if (diff == 0) return;
  d->max_abs = MaxKeep(d->max_abs, diff);
  const double scale = MaxKeep(std::fabs(a), std::fabs(b));
  if (!(diff <= atol + rtol * scale)) {
    ++d->differ;
    if (d->first < 0) d->first = i;
  }
}

KB_HD inline void MergeRunDiff(const RunDiff& b, RunDiff* a) {
  a->max_abs = MaxKeep(a->max_abs, b.max_abs);
  a->differ += b.differ;
  a->nan_one += b.nan_one;
  a->first = FirstIndex(a->first, b.first);
}

KB_HD inline uint64_t CheckMix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The term of 32-bit word `i` (little-endian, the last one zero-padded) in
// an input's keyed checksum: the checksum is the sum of the terms modulo
// 2^64, so it can be reduced in any order. Without the key, which the
// runner draws per tensor set and never passes to a candidate, no change
// to an input can be made that keeps the sum.
KB_HD inline uint64_t ChecksumWord(uint64_t key, uint64_t i, uint32_t word) {
  return CheckMix(CheckMix(key ^ i) + word);
}

}  // namespace kbench

#endif  // KBENCH_RUNNER_HOST_COMPARE_MATH_H_
