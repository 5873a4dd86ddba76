// SweepService: a sweep is one kernel per problem of a suite, submitted as
// one batch of ordinary jobs (what `kbctl sweep` does, for programs). It
// checks the batch as a whole (the suite exists, each kernel names one of
// its problems, no problem twice, the batch's size, room reserved for every
// job), then submits each kernel through JobService, so every job is
// validated, run, recorded and cancellable as any other. A kernel
// JobService refuses becomes that row's error; a sweep whose every kernel
// is refused is refused with the first one's status and is not stored; a
// sweep that cannot be stored has its jobs cancelled.
//
// The sweep is stored as made (its rows name problems and jobs); GetSweep
// reads each job's state and computes the table (contract/sweep_table.h).
//
// Ownership: borrows the JobService and Store, which must outlive it.
// Thread safety: every method is thread safe (it keeps no state of its
// own; JobService and Store are thread safe).
#ifndef KBENCH_SERVER_CORE_SWEEP_SERVICE_H_
#define KBENCH_SERVER_CORE_SWEEP_SERVICE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "kbench/v1/kbench.pb.h"
#include "server/core/job_service.h"
#include "server/store/store.h"

namespace kbench {

class SweepService {
 public:
  struct Options {
    // Most kernels in one sweep (a suite of KernelBench's size fits).
    int max_kernels = 256;
    // Most bytes of kernel source in one sweep, all kernels together (each
    // kernel is also held to JobService's own limit).
    int64_t max_source_bytes = int64_t{16} << 20;
  };

  SweepService(const Options& options, JobService* jobs, Store* store);

  // InvalidArgument (naming the kernel by index and file) for a batch that
  // cannot be a sweep; NotFound for an unknown suite.
  absl::StatusOr<v1::Sweep> Submit(const v1::SubmitSweepRequest& request);
  // InvalidArgument for a malformed id; NotFound: "no sweep 'ID'".
  absl::StatusOr<v1::Sweep> Get(const std::string& id);

 private:
  // The stored sweep with each row's job state and the totals.
  v1::Sweep Fill(v1::Sweep sweep);
  // After the store refused `sweep`: cancels its jobs and says how many
  // were cancelled; Internal if the store found the sweep invalid, else
  // Unavailable.
  absl::Status StoreFailed(const v1::Sweep& sweep, const absl::Status& stored);

  const Options options_;
  JobService* const jobs_;
  Store* const store_;
};

}  // namespace kbench

#endif  // KBENCH_SERVER_CORE_SWEEP_SERVICE_H_
