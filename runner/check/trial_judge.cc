#include "runner/check/trial_judge.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "runner/device/device_checks.h"
#include "runner/host/run_checks.h"

namespace kbench {

std::string TrialFailure(const v1::TrialResult& t) {
  std::string where = absl::StrCat(t.shape_set(), "/", t.shape());
  if (t.nan_count() > 0) {
    return absl::StrFormat(
        "%s (seed %d): %d of %d outputs are NaN or unwritten (first at %s)",
        where, t.seed(), t.nan_count(), t.elements(), t.first_mismatch());
  }
  return absl::StrFormat(
      "%s (seed %d): %d of %d outputs outside tolerance, max abs error %.3g, "
      "max rel error %.3g, rel-norm error %.3g; first mismatch at %s",
      where, t.seed(), t.mismatches(), t.elements(), t.max_abs_error(),
      t.max_rel_error(), t.rel_norm_error(),
      t.first_mismatch().empty() ? "(none: the norm test failed)"
                                 : t.first_mismatch());
}

// Copies the error figures of `from` (not its verdict) into `to`.
void CopyFigures(const v1::TrialResult& from, v1::TrialResult* to) {
  to->set_max_abs_error(from.max_abs_error());
  to->set_max_rel_error(from.max_rel_error());
  to->set_rel_norm_error(from.rel_norm_error());
  to->set_mismatches(from.mismatches());
  to->set_elements(from.elements());
  to->set_nan_count(from.nan_count());
  to->set_first_mismatch(from.first_mismatch());
}

// Folds one output's figures into `trial`: with several outputs, the
// first failing one is reported (else the first).
void FoldOutput(const v1::TrialResult& one, bool* all_passed,
                v1::TrialResult* trial) {
  if ((!one.passed() && *all_passed) || trial->elements() == 0) {
    CopyFigures(one, trial);
  }
  *all_passed = *all_passed && one.passed();
}

// The figures of one output (nullopt: not compared).
using OutputErrorsFn =
    std::function<absl::StatusOr<std::optional<OutputErrors>>(
        const TensorSet::Tensor&)>;

// Every output of `tensors` judged under the problem's tolerance by the
// figures `errors_of` gives it, folded into `trial`.
absl::Status JudgeOutputs(const v1::Problem& problem, const TensorSet& tensors,
                          const OutputErrorsFn& errors_of,
                          v1::TrialResult* trial) {
  bool all_passed = true;
  for (const TensorSet::Tensor& t : tensors.tensors()) {
    if (t.spec->role() != v1::TENSOR_ROLE_OUTPUT) continue;
    ASSIGN_OR_RETURN(const std::optional<OutputErrors> errors, errors_of(t));
    if (!errors.has_value()) continue;
    v1::TrialResult one;
    FinishOutputCompare(*errors, t.elements, problem.tolerance(),
                        OutputLayout{t.extents, IndexNames(*t.spec)}, &one);
    FoldOutput(one, &all_passed, trial);
  }
  trial->set_passed(all_passed);
  return absl::OkStatus();
}

absl::Status NoGolden(const TensorSet::Tensor& t) {
  return absl::InternalError(absl::StrCat(
      "the reference produced no golden result for '", t.spec->name(), "'"));
}

// CompareOutputs on the device: every output of `tensors` against
// `golden`, where both already are.
absl::Status CompareOnDevice(const v1::Problem& problem,
                             const TensorSet& tensors,
                             const GoldenBuffers& golden, cudaStream_t stream,
                             v1::TrialResult* trial) {
  return JudgeOutputs(
      problem, tensors,
      [&](const TensorSet::Tensor& t)
          -> absl::StatusOr<std::optional<OutputErrors>> {
        const double* ref = golden.Find(t.spec->name());
        if (ref == nullptr || golden.Elements(t.spec->name()) != t.elements) {
          return NoGolden(t);
        }
        return DeviceOutputErrors(t.buffer.get(), t.spec->dtype(), ref,
                                  t.elements, problem.tolerance(), stream);
      },
      trial);
}

// SanityCheckTolerance on the device, for every output's golden result.
absl::Status SanityOnDevice(const v1::Problem& problem,
                            const GoldenBuffers& golden,
                            const std::string& where, cudaStream_t stream) {
  for (const auto& [name, buffer] : golden.buffers()) {
    const int64_t n = golden.Elements(name);
    if (n < kMinSanityElements) continue;
    const double* ref = buffer.as<double>();
    ASSIGN_OR_RETURN(const ValueSummary summary,
                     DeviceValueSummary(ref, n, stream));
    const double mean = summary.sum / static_cast<double>(n);
    ASSIGN_OR_RETURN(
        const OutputErrors zero,
        DeviceConstantErrors(0.0, ref, n, problem.tolerance(), stream));
    ASSIGN_OR_RETURN(
        const OutputErrors constant,
        DeviceConstantErrors(mean, ref, n, problem.tolerance(), stream));
    RETURN_IF_ERROR(
        SanityVerdict(zero, constant, mean, n, problem.tolerance(), where));
  }
  return absl::OkStatus();
}

void FinishReport(v1::CorrectnessReport* report) {
  int passed = 0;
  for (const v1::TrialResult& t : report->trials()) passed += t.passed();
  report->set_trials_run(report->trials_size());
  report->set_trials_passed(passed);
  report->set_passed(passed == report->trials_size() && passed > 0);
}

}  // namespace kbench
