#include "runner/check/correctness_checker.h"

#include <chrono>
#include <functional>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "contract/hidden_redact.h"
#include "contract/holdout.h"
#include "contract/problem_util.h"
#include "runner/check/trial_judge.h"
#include "runner/device/cuda_status.h"
#include "runner/device/device_checks.h"
#include "runner/host/output_compare.h"
#include "runner/host/run_checks.h"
#include "spdlog/spdlog.h"

namespace kbench {
namespace {

uint64_t Mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

uint64_t TrialSeed(uint64_t job_seed, int set, int shape, int trial) {
  return Mix(job_seed ^ Mix((uint64_t(set) << 40) ^ (uint64_t(shape) << 20) ^
                            uint64_t(trial)));
}

namespace {

// Device copies of every output of `tensors`, in tensor order.
absl::Status CopyOutputs(const TensorSet& tensors, cudaStream_t stream,
                         std::vector<DeviceBuffer>* out) {
  out->clear();
  for (const TensorSet::Tensor& t : tensors.tensors()) {
    if (t.spec->role() != v1::TENSOR_ROLE_OUTPUT) continue;
    ASSIGN_OR_RETURN(DeviceBuffer copy,
                     DeviceBuffer::Allocate(t.buffer.bytes()));
    CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(copy.get(), t.buffer.get(), t.buffer.bytes(),
                        cudaMemcpyDeviceToDevice, stream),
        "keeping the first run's outputs");
    out->push_back(std::move(copy));
  }
  return absl::OkStatus();
}

// CompareOutputs, reading each output from `source(output)` (null: none).
absl::Status CompareOutputsFrom(
    const v1::Problem& problem, const TensorSet& tensors,
    const std::map<std::string, std::vector<double>>& golden,
    cudaStream_t stream, v1::TrialResult* trial,
    const std::function<const TensorSet::Tensor*(const TensorSet::Tensor&)>&
        source) {
  std::vector<double> host;
  return JudgeOutputs(
      problem, tensors,
      [&](const TensorSet::Tensor& t)
          -> absl::StatusOr<std::optional<OutputErrors>> {
        const TensorSet::Tensor* src = source(t);
        if (src == nullptr) return std::nullopt;
        RETURN_IF_ERROR(tensors.ReadAsDouble(*src, stream, &host));
        auto it = golden.find(t.spec->name());
        if (it == golden.end() || it->second.size() != host.size() ||
            static_cast<int64_t>(host.size()) != t.elements) {
          return NoGolden(t);
        }
        return HostOutputErrors(host.data(), it->second.data(), t.elements,
                                problem.tolerance());
      },
      trial);
}

}  // namespace

absl::Status CompareOutputs(
    const v1::Problem& problem, const TensorSet& tensors,
    const std::map<std::string, std::vector<double>>& golden,
    cudaStream_t stream, v1::TrialResult* trial, ReferenceOp* read_from) {
  return CompareOutputsFrom(
      problem, tensors, golden, stream, trial,
      [read_from](const TensorSet::Tensor& t) {
        return read_from ? read_from->Eager()->Output(t.spec->name()) : &t;
      });
}

absl::Status CompareOutputs(
    const v1::Problem& problem, const TensorSet& tensors,
    const std::map<std::string, std::vector<double>>& golden,
    cudaStream_t stream, v1::TrialResult* trial, EagerPipeline* read_from) {
  return CompareOutputsFrom(problem, tensors, golden, stream, trial,
                            [read_from](const TensorSet::Tensor& t) {
                              return read_from->Output(t.spec->name());
                            });
}

absl::Status CorrectnessChecker::RunOnce(BoundPlan* bound, TensorSet* tensors,
                                         const std::vector<uint64_t>& sums,
                                         const std::string& where, double* ms) {
  cudaStream_t s = ctx_->stream();
  RETURN_IF_ERROR(tensors->PoisonOutputs(s));
  CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s), "preparing a trial");
  const auto t0 = std::chrono::steady_clock::now();
  RETURN_IF_ERROR(bound->Enqueue());
  const cudaError_t err = cudaStreamSynchronize(s);
  if (err != cudaSuccess) {
    return CudaRtStatus(err, absl::StrCat("running the kernel on ", where));
  }
  *ms = std::chrono::duration<double, std::milli>(
            std::chrono::steady_clock::now() - t0)
            .count();
  std::string damage;
  RETURN_IF_ERROR(tensors->CheckGuards(s, &damage));
  if (!damage.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(damage, " (on ", where, ")"));
  }
  std::vector<uint64_t> after;
  RETURN_IF_ERROR(tensors->InputChecksums(s, &after));
  const std::string changed = tensors->DescribeInputChanges(sums, after);
  if (!changed.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(changed, " (on ", where, ")"));
  }
  return absl::OkStatus();
}

namespace {

// Trials per shape of `set`: its own count, else the job's.
int SetTrials(const v1::ShapeSet& set, int job_trials) {
  return set.trials() > 0 ? set.trials() : job_trials;
}

}  // namespace

absl::Status CorrectnessChecker::Run(const v1::RunnerJob& job,
                                     const ProgressFn& progress,
                                     v1::CorrectnessReport* report) {
  const v1::Problem& problem = job.problem();
  const int trials = job.trials() > 0 ? job.trials() : 1;
  const int extra = job.kind() == v1::JOB_KIND_SUBMIT ? kHiddenExtraTrials : 0;
  int total = 0;
  for (const v1::ShapeSet& set : job.check_sets()) {
    total += set.shapes_size() *
             (SetTrials(set, trials) + (set.hidden() ? 0 : extra));
  }
  *report->mutable_tolerance() = problem.tolerance();
  cudaStream_t s = ctx_->stream();
  seeds_.clear();
  hidden_trials_ = 0;
  int done = 0;
  for (int si = 0; si < job.check_sets_size(); ++si) {
    const v1::ShapeSet& set = job.check_sets(si);
    const int base_trials = SetTrials(set, trials);
    const int set_trials = base_trials + (set.hidden() ? 0 : extra);
    // How this set's hidden cases are named: a drawn class says which.
    const std::string hidden_words = HiddenCaseWords(set);
    for (int hi = 0; hi < set.shapes_size(); ++hi) {
      const v1::Shape& shape = set.shapes(hi);
      ASSIGN_OR_RETURN(const DimValues dims, ShapeDims(problem, shape));
      const std::string shown_where =
          set.hidden() ? hidden_words
                       : absl::StrCat(set.name(), "/", shape.name(), " (",
                                      FormatDims(problem, dims), ")");
      absl::StatusOr<const ConcretePlan*> cplan_or = plans_->At(dims);
      if (!cplan_or.ok()) {
        const absl::Status& limits = cplan_or.status();
        if (!set.hidden()) return limits;
        return HiddenPlanError(limits, hidden_words);
      }
      const ConcretePlan& cplan = **cplan_or;
      // Allocation, binding, input and golden messages give sizes (a
      // workspace's bytes, dims): for a hidden case only the kind of
      // failure is told, with `advice`.
      auto withheld = [&](const absl::Status& st, const char* what,
                          const char* advice = kKernelAdvice) {
        if (st.ok() || !set.hidden()) return st;
        return absl::Status(
            st.code(), absl::StrCat(what, " failed on ", hidden_words,
                                    " (details withheld: they would show its "
                                    "size); ",
                                    advice));
      };
      absl::StatusOr<TensorSet> allocated = TensorSet::Allocate(problem, dims);
      if (!allocated.ok()) {
        return withheld(allocated.status(), "allocating the tensors");
      }
      TensorSet tensors = *std::move(allocated);
      absl::StatusOr<std::unique_ptr<BoundPlan>> bound_or =
          module_->Bind(cplan, tensors);
      if (!bound_or.ok()) {
        return withheld(bound_or.status(), "binding the launch plan");
      }
      std::unique_ptr<BoundPlan> bound = *std::move(bound_or);
      // The reference's eager pipeline runs between the candidate's two runs
      // where the library supports the shape (cuBLASLt may refuse odd
      // bf16 leading dimensions); elsewhere the two runs are back to back.
      bool eager_ok = true;
      if (absl::Status st = reference_->Eager()->Prepare(tensors); !st.ok()) {
        // A library's message may give the shape: not for a hidden case.
        spdlog::warn("no eager reference between runs on {}: {}", shown_where,
                     set.hidden() ? "(details withheld: a hidden case)"
                                  : std::string(st.message()));
        cudaGetLastError();
        eager_ok = false;
      }
      for (int t = 0; t < set_trials; ++t) {
        const bool hidden = set.hidden() || t >= base_trials;
        const std::string words = set.hidden() ? hidden_words : "a hidden case";
        const std::string where =
            hidden ? words : absl::StrCat(shown_where, ", trial ", t + 1);
        ++done;
        progress(
            hidden
                ? absl::StrCat("checking ", words, " (", done, "/", total, ")")
                : absl::StrCat("checking ", shown_where, ", trial ", t + 1, "/",
                               base_trials, " (", done, "/", total, ")"));
        v1::TrialResult* trial = report->add_trials();
        trial->set_hidden(hidden);
        trial->set_shape_set(set.name());
        trial->set_shape(shape.name());
        trial->mutable_dims()->insert(dims.begin(), dims.end());
        trial->set_seed(TrialSeed(job.seed(), si, hi, t));
        if (hidden) {
          ++hidden_trials_;
        } else {
          seeds_.push_back(trial->seed());
        }
        // The inputs and the golden result are the problem's work: at a
        // hidden case their errors (a drawn integer bound, a golden
        // kernel's failure, which name the dims) are withheld too.
        RETURN_IF_ERROR(withheld(tensors.FillInputs(trial->seed(), s),
                                 "drawing the inputs", kProblemsFault));
        RETURN_IF_ERROR(tensors.FillGuards(s));
        std::vector<uint64_t> sums;
        RETURN_IF_ERROR(tensors.InputChecksums(s, &sums));
        // Run 1, then the reference, then run 2 on the same inputs. After
        // each run (its inputs' checksums just checked) the golden result
        // is computed on the device, compared there, and scrubbed: no
        // candidate runs while it is in device memory, and nothing of the
        // size of an output travels to the host.
        auto check = [&](bool sanity, v1::TrialResult* into) {
          GoldenBuffers golden;
          RETURN_IF_ERROR(withheld(reference_->DeviceGolden(tensors, &golden),
                                   "the problem's golden result",
                                   kProblemsFault));
          if (sanity) {
            // The problem's check must reject trivial outputs here.
            RETURN_IF_ERROR(SanityOnDevice(
                problem, golden,
                set.hidden() ? "(hidden)"
                             : absl::StrCat(set.name(), "/", shape.name()),
                s));
          }
          RETURN_IF_ERROR(CompareOnDevice(problem, tensors, golden, s, into));
          return golden.Scrub(s);
        };
        double ms = 0;
        RETURN_IF_ERROR(RunOnce(bound.get(), &tensors, sums, where, &ms));
        trial->set_kernel_ms(ms);
        RETURN_IF_ERROR(check(/*sanity=*/t == 0, trial));
        std::vector<DeviceBuffer> first;
        if (trial->passed()) RETURN_IF_ERROR(CopyOutputs(tensors, s, &first));
        if (eager_ok) {
          absl::Status st = reference_->Eager()->Run();
          if (st.ok()) {
            CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s),
                                 "running the reference between the two runs");
          } else {
            spdlog::warn("eager reference on {}: {}", shown_where,
                         set.hidden() ? "(details withheld: a hidden case)"
                                      : std::string(st.message()));
            cudaGetLastError();
            eager_ok = false;
          }
        }
        RETURN_IF_ERROR(RunOnce(bound.get(), &tensors, sums, where, &ms));
        std::string differ;
        bool second_failed = false;
        if (trial->passed()) {
          // A run that passed must be followed by one that passes, too.
          v1::TrialResult second;
          RETURN_IF_ERROR(check(/*sanity=*/false, &second));
          size_t oi = 0;
          for (const TensorSet::Tensor& out : tensors.tensors()) {
            if (out.spec->role() != v1::TENSOR_ROLE_OUTPUT) continue;
            if (differ.empty() && oi < first.size()) {
              ASSIGN_OR_RETURN(const RunDiff diff,
                               DeviceRunDiff(first[oi].get(), out.buffer.get(),
                                             out.spec->dtype(), out.elements,
                                             problem.tolerance(), s));
              differ = DescribeRunDiff(
                  diff, out.elements,
                  OutputLayout{out.extents, IndexNames(*out.spec)}, !hidden);
              if (!differ.empty()) {
                differ = absl::StrCat("'", out.spec->name(), "': ", differ);
              }
            }
            ++oi;
          }
          if (!second.passed()) {
            second_failed = true;
            trial->set_passed(false);
            CopyFigures(second, trial);
          } else if (!differ.empty()) {
            trial->set_passed(false);
          }
        }
        if (!trial->passed() && report->message().empty()) {
          std::string why =
              hidden ? HiddenTrialFailure(*trial, words) : TrialFailure(*trial);
          if (second_failed) {
            absl::StrAppend(&why,
                            " (on the second run of the same inputs, after "
                            "the reference ran; the first run was right: the "
                            "kernel must not rely on state left by an "
                            "earlier call)");
          } else if (!differ.empty()) {
            why = hidden ? absl::StrCat("failed on ", words, ": ", differ)
                         : absl::StrCat(shown_where, " (seed ", trial->seed(),
                                        "): ", differ);
          }
          report->set_message(why);
        }
      }
    }
  }
  FinishReport(report);
  return absl::OkStatus();
}

}  // namespace kbench
