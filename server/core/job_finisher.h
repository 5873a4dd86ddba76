// JobFinisher: the one path by which a job ends, whoever ends it: a
// worker's result (through the Scheduler), a failed compile, a cancel, a
// failed recovery. It
//  - strips hidden cases from the result (their shape, dims and seed never
//    leave kbd);
//  - fills a profile's analysis (headroom, roofline, hints) and, in a
//    session, its deltas against the session's previous profile of the
//    same problem and shape;
//  - writes the job DONE with its session's turn in one store transaction
//    (JobTable::Finish), before anyone watching sees it DONE;
//  - counts it in the metrics and logs one line.
//
// Ownership: borrows everything it is given (all must outlive it; Metrics
// is optional).
// Thread safety: Finish is thread safe; a job is finished once (later
// calls for it do nothing).
#ifndef KBENCH_SERVER_CORE_JOB_FINISHER_H_
#define KBENCH_SERVER_CORE_JOB_FINISHER_H_

#include <string>

#include "base/metrics.h"
#include "contract/problem_registry.h"
#include "kbench/v1/kbench.pb.h"
#include "server/core/job_table.h"
#include "server/core/sessions.h"

namespace kbench {

class JobFinisher {
 public:
  struct Options {
    // Profile turns of a session searched for the previous profile to
    // compare with.
    int max_profiles_to_look_back = 20;
  };

  JobFinisher(const Options& options, const ProblemRegistry* problems,
              JobTable* jobs, Sessions* sessions, Metrics* metrics = nullptr)
      : options_(options),
        problems_(problems),
        jobs_(jobs),
        sessions_(sessions),
        metrics_(metrics) {}

  // Ends job `job_id` with `result` (idempotent: a finished job stays as it
  // is).
  void Finish(const std::string& job_id, v1::JobResult result);

 private:
  // Never fails the job: a failed look-up is logged.
  void AnalyzeProfileResult(const v1::Job& job, v1::JobResult* result);

  const Options options_;
  const ProblemRegistry* problems_;
  JobTable* jobs_;
  Sessions* sessions_;
  Metrics* metrics_;
};

}  // namespace kbench

#endif  // KBENCH_SERVER_CORE_JOB_FINISHER_H_
