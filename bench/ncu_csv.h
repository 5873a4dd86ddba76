// NcuCsv: reads the CSV that `ncu --csv` writes (one row per kernel launch
// and metric), for comparing kbench's figures with Nsight Compute's.
// Values are converted to base units (bytes, nanoseconds), whatever unit
// ncu printed them in, and thousands separators are removed.
//
// Thread safety: pure functions.
#ifndef KBENCH_BENCH_NCU_CSV_H_
#define KBENCH_BENCH_NCU_CSV_H_

#include <string>
#include <vector>

namespace kbench {

struct NcuRow {
  std::string id;      // ncu's launch ID.
  std::string pid;     // "Process ID".
  std::string kernel;  // "Kernel Name".
  std::string grid;    // "Grid Size", e.g. "(12, 1, 1)".
  std::string block;   // "Block Size".
  std::string metric;
  std::string unit;  // As printed.
  double value = 0;  // In base units.
};

// Splits one CSV line: fields are double-quoted, and a quoted field may
// hold commas ("(12, 1, 1)", "1,234.5").
std::vector<std::string> CsvFields(const std::string& line);

// Every metric row of an ncu CSV log; "==PROF==" lines and rows without a
// numeric value are skipped.
std::vector<NcuRow> ParseNcuCsv(const std::string& csv);

// The baseline's runs in the gpu__time_duration.sum rows of a log of its
// kernels: a run is the baseline's first kernel, named `first` (e.g.
// gather_linear's "concat"), with grid `grid`, followed in launch order in
// the same process by `launches` - 1 kernels named neither `first` nor
// `candidate` (the library's GEMM). Each run's duration in us is the sum of
// its kernels' (ncu times each kernel alone).
std::vector<double> NcuReferenceRunsUs(const std::vector<NcuRow>& rows,
                                       const std::string& first,
                                       const std::string& candidate,
                                       const std::string& grid, int launches);

}  // namespace kbench

#endif  // KBENCH_BENCH_NCU_CSV_H_
