#include "runner/host/output_compare.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "contract/expr.h"

namespace kbench {

std::string FormatIndex(int64_t flat, const OutputLayout& layout) {
  const size_t rank = layout.extents.size();
  if (rank == 0 || layout.index_names.size() != rank) {
    return absl::StrCat("i=", flat);
  }
  std::vector<int64_t> idx(rank);
  for (size_t a = rank; a-- > 0;) {
    const int64_t e = std::max<int64_t>(layout.extents[a], 1);
    idx[a] = flat % e;
    flat /= e;
  }
  std::vector<std::string> parts;
  for (size_t a = 0; a < rank; ++a) {
    parts.push_back(absl::StrCat(layout.index_names[a], "=", idx[a]));
  }
  return absl::StrJoin(parts, " ");
}

void FinishOutputCompare(const OutputErrors& e, int64_t n,
                         const v1::Tolerance& tolerance,
                         const OutputLayout& layout, v1::TrialResult* trial) {
  // The floor keeps the norm test relative to the problem's scale, not to
  // an output that happens to be all tail (see Tolerance.norm_floor).
  const double floor_sq =
      tolerance.norm_floor() * tolerance.norm_floor() * static_cast<double>(n);
  const double denom_sq = std::max(e.ref_sq, floor_sq);
  const double rel_norm =
      denom_sq > 0 ? std::sqrt(e.diff_sq / denom_sq) : std::sqrt(e.diff_sq);
  trial->set_max_abs_error(e.max_abs);
  trial->set_max_rel_error(e.max_rel);
  trial->set_rel_norm_error(rel_norm);
  trial->set_mismatches(e.mismatches);
  trial->set_elements(n);
  trial->set_nan_count(e.nans);
  trial->set_first_mismatch(e.first >= 0 ? FormatIndex(e.first, layout) : "");
  trial->set_passed(e.mismatches == 0 && e.nans == 0 &&
                    rel_norm <= tolerance.max_rel_norm());
}

OutputErrors HostOutputErrors(const double* out, const double* ref, int64_t n,
                              const v1::Tolerance& tolerance) {
  OutputErrors e = ZeroOutputErrors();
  for (int64_t i = 0; i < n; ++i) {
    AddOutputError(out[i], ref[i], i, tolerance.atol(), tolerance.rtol(), &e);
  }
  return e;
}

void CompareOutput(const double* out, const double* ref, int64_t n,
                   const v1::Tolerance& tolerance, const OutputLayout& layout,
                   v1::TrialResult* trial) {
  FinishOutputCompare(HostOutputErrors(out, ref, n, tolerance), n, tolerance,
                      layout, trial);
}

std::vector<std::string> IndexNames(const v1::TensorSpec& tensor) {
  std::vector<std::string> names;
  for (int a = 0; a < tensor.shape_size(); ++a) {
    const std::string& e = tensor.shape(a);
    if (IsIdentifier(e)) {
      std::string lower = e;
      for (char& c : lower) c = std::tolower(static_cast<unsigned char>(c));
      names.push_back(lower);
    } else {
      names.push_back(absl::StrCat("i", a));
    }
  }
  return names;
}

}  // namespace kbench
