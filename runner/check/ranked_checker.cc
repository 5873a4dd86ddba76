#include "runner/check/ranked_checker.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "contract/hidden_redact.h"
#include "contract/holdout.h"
#include "contract/problem_util.h"
#include "runner/check/ranked_runs.h"
#include "runner/check/trial_judge.h"

namespace kbench {

absl::Status RankedChecker::Run(const v1::RunnerJob& job,
                                const ProgressFn& progress,
                                v1::CorrectnessReport* report) {
  const v1::Problem& problem = job.problem();
  const int trials = job.trials() > 0 ? job.trials() : 1;
  const int extra = job.kind() == v1::JOB_KIND_SUBMIT ? kHiddenExtraTrials : 0;
  int total = 0;
  for (const v1::ShapeSet& set : job.check_sets()) {
    total += set.shapes_size() * ((set.trials() > 0 ? set.trials() : trials) +
                                  (set.hidden() ? 0 : extra));
  }
  *report->mutable_tolerance() = problem.tolerance();
  seeds_.clear();
  hidden_trials_ = 0;
  const int world = ranks_->world_size();
  int done = 0;
  for (int si = 0; si < job.check_sets_size(); ++si) {
    const v1::ShapeSet& set = job.check_sets(si);
    const int base_trials = set.trials() > 0 ? set.trials() : trials;
    const int set_trials = base_trials + (set.hidden() ? 0 : extra);
    const std::string hidden_words = HiddenCaseWords(set);
    for (int hi = 0; hi < set.shapes_size(); ++hi) {
      ASSIGN_OR_RETURN(const DimValues dims,
                       ShapeDims(problem, set.shapes(hi)));
      const std::string shown =
          set.hidden() ? hidden_words
                       : absl::StrCat(set.name(), "/", set.shapes(hi).name(),
                                      " (", FormatDims(problem, dims), ")");
      // At a hidden case only the kind of failure is told. A hidden set's
      // preparation may name its sizes; a visible shape's may not leak
      // anything its own name does not.
      auto withheld = [&](const absl::Status& st, const char* what,
                          bool hidden) {
        if (st.ok() || !hidden) return st;
        return absl::Status(
            st.code(),
            absl::StrCat(what, " failed on ",
                         set.hidden() ? hidden_words : "a hidden case",
                         " (details withheld); ", kKernelAdvice));
      };
      absl::StatusOr<std::unique_ptr<RankedRuns>> prepared =
          RankedRuns::Create(ranks_, modules_, plans_, gathered_, dims);
      RETURN_IF_ERROR(
          withheld(prepared.status(), "preparing the ranks", set.hidden()));
      RankedRuns& runs = **prepared;
      for (int t = 0; t < set_trials; ++t) {
        const bool hidden = set.hidden() || t >= base_trials;
        const std::string words = set.hidden() ? hidden_words : "a hidden case";
        const std::string where =
            hidden ? words : absl::StrCat(shown, ", trial ", t + 1);
        ++done;
        progress(absl::StrCat("checking ", where, " on ", world, " ranks (",
                              done, "/", total, ")"));
        v1::TrialResult* trial = report->add_trials();
        trial->set_hidden(hidden);
        trial->set_shape_set(set.name());
        trial->set_shape(set.shapes(hi).name());
        trial->mutable_dims()->insert(dims.begin(), dims.end());
        trial->set_seed(TrialSeed(job.seed(), si, hi, t));
        if (hidden) {
          ++hidden_trials_;
        } else {
          seeds_.push_back(trial->seed());
        }
        RETURN_IF_ERROR(
            withheld(runs.Draw(trial->seed()), "drawing the inputs", hidden));
        // Run 1, judged; run 2 on the same inputs, judged again.
        int failing_rank = -1;
        double ms = 0;
        RETURN_IF_ERROR(withheld(runs.RunAll(where, &ms), "running", hidden));
        trial->set_kernel_ms(ms);
        const std::string judged =
            set.hidden() ? "(hidden)"
                         : absl::StrCat(set.name(), "/", set.shapes(hi).name());
        RETURN_IF_ERROR(withheld(runs.Judge(reference_, /*sanity=*/t == 0,
                                            judged, trial, &failing_rank),
                                 "judging", hidden));
        bool second_failed = false;
        if (trial->passed()) {
          RETURN_IF_ERROR(withheld(runs.RunAll(where, &ms), "running", hidden));
          v1::TrialResult second;
          RETURN_IF_ERROR(withheld(
              runs.Judge(reference_, false, judged, &second, &failing_rank),
              "judging", hidden));
          if (!second.passed()) {
            second_failed = true;
            trial->set_passed(false);
            CopyFigures(second, trial);
          }
        }
        if (!trial->passed() && report->message().empty()) {
          std::string why =
              hidden ? HiddenTrialFailure(*trial, words) : TrialFailure(*trial);
          if (failing_rank >= 0) {
            why = absl::StrCat("rank ", failing_rank, " of ", world, ": ", why);
          }
          if (second_failed) {
            absl::StrAppend(&why,
                            " (on the second run of the same inputs; the "
                            "first run was right: the kernel must not rely "
                            "on state left by an earlier call)");
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
