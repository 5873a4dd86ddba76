// The rows and totals of a sweep (v1::Sweep), computed from its jobs, in
// one place for kbd (GetSweep) and kbctl (`sweep --serial`, which submits
// the jobs one by one and builds the same table).
//
// Thread safety: stateless functions.
#ifndef KBENCH_CONTRACT_SWEEP_TABLE_H_
#define KBENCH_CONTRACT_SWEEP_TABLE_H_

#include "kbench/v1/kbench.pb.h"

namespace kbench {

// Sets `row`'s stage, verdict, message, timing figures and wall time from
// `job` (its problem, filename and job id are left as they are). A timed
// job that passed fills speedup, basis, kernel_us and floor_us; others
// leave them 0.
void FillSweepRow(const v1::Job& job, v1::SweepRow* row);

// Sets `sweep`'s done, jobs, passed and geomean_speedup from its rows.
void SummarizeSweep(v1::Sweep* sweep);

}  // namespace kbench

#endif  // KBENCH_CONTRACT_SWEEP_TABLE_H_
