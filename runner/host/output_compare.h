// Compares a kernel's output with the fp64 golden result under a problem's
// tolerance and fills the error figures of a TrialResult.
//
// An element passes when |out - ref| <= atol + rtol * |ref| (NaN and Inf
// never pass); the trial passes when every element passes and
// ||out - ref||_2 / max(||ref||_2, norm_floor * sqrt(n)) <= max_rel_norm.
//
// Thread safety: pure function; safe to call concurrently.
#ifndef KBENCH_RUNNER_HOST_OUTPUT_COMPARE_H_
#define KBENCH_RUNNER_HOST_OUTPUT_COMPARE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "kbench/v1/problem.pb.h"
#include "kbench/v1/report.pb.h"
#include "runner/host/compare_math.h"

namespace kbench {

struct OutputLayout {
  std::vector<int64_t> extents;          // Row-major extents of the output.
  std::vector<std::string> index_names;  // e.g. {"b", "k"}; same length.
};

// Sets passed, max_abs_error, max_rel_error (|out - ref| / max(|ref|,
// atol)), rel_norm_error, mismatches, elements, nan_count and
// first_mismatch ("b=3 k=17") of `trial`. `n` is the element count.
void CompareOutput(const double* out, const double* ref, int64_t n,
                   const v1::Tolerance& tolerance, const OutputLayout& layout,
                   v1::TrialResult* trial);

// The figures CompareOutput judges: AddOutputError over the `n` elements.
OutputErrors HostOutputErrors(const double* out, const double* ref, int64_t n,
                              const v1::Tolerance& tolerance);

// Sets the same fields from figures accumulated elsewhere (AddOutputError
// over `n` elements, on the host or the device).
void FinishOutputCompare(const OutputErrors& errors, int64_t n,
                         const v1::Tolerance& tolerance,
                         const OutputLayout& layout, v1::TrialResult* trial);

// "b=3 k=17" for flat index `flat` of an output of `layout` ("i=<flat>"
// when the layout is unknown).
std::string FormatIndex(int64_t flat, const OutputLayout& layout);

// Index names for an output tensor: a shape entry that is a single dim name
// gives that name in lower case ("B" -> "b"), anything else "i<axis>".
std::vector<std::string> IndexNames(const v1::TensorSpec& tensor);

}  // namespace kbench

#endif  // KBENCH_RUNNER_HOST_OUTPUT_COMPARE_H_
