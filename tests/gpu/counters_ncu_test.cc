// The service's hardware counters against Nsight Compute on the same
// kernels: kbd with a kbworker (which saves every leased RunnerJob) answers
// profile_kernel; then the same job, turned into a one-trial correctness run
// at the profiled shape, runs under `ncu --clock-control none --metrics ...`
// through `kbrunner --oneshot`, and the first launch of the kernel is
// compared metric by metric. Event counts (sectors, requests, FLOP
// instructions) must be equal, DRAM bytes within 3% (or 8 KiB) of one of
// two ncu runs, the launch's duration within 10% (see kTime), and rates
// within 5% (or 0.5 points for small percentages) for one of two profiles
// against one of two ncu runs. Prints the side-by-side
// table. A second test holds a submit's GPU time (the speedup's basis)
// against ncu's gpu__time_duration at the same shape.
// Skips without a GPU or without ncu.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "bench/ncu_csv.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "kbench/v1/kbench.grpc.pb.h"
#include "kbench/v1/worker.pb.h"
#include "testing/process.h"

namespace kbench {
namespace {

using ::kbench::testing::KbdProcess;

enum class Kind { kCount, kBytes, kWrites, kTime, kRate };
struct Compared {
  const char* metric;
  Kind kind;
};
constexpr Compared kCompared[] = {
    {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", Kind::kCount},
    {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", Kind::kCount},
    {"l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", Kind::kCount},
    {"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", Kind::kCount},
    {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", Kind::kCount},
    {"dram__bytes_read.sum", Kind::kBytes},
    {"dram__bytes_write.sum", Kind::kWrites},
    {"gpu__time_duration.sum", Kind::kTime},
    {"lts__t_sector_hit_rate.pct", Kind::kRate},
    {"l1tex__t_sector_hit_rate.pct", Kind::kRate},
    {"sm__warps_active.avg.pct_of_peak_sustained_active", Kind::kRate},
    {"smsp__warps_eligible.avg.per_cycle_active", Kind::kRate},
    {"smsp__warps_active.avg.per_cycle_active", Kind::kRate},
    {"smsp__issue_active.avg.pct_of_peak_sustained_active", Kind::kRate},
    {"sm__throughput.avg.pct_of_peak_sustained_elapsed", Kind::kRate},
    {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
     Kind::kRate},
    {"gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", Kind::kRate},
};

double Get(const std::map<std::string, double>& values, const char* metric) {
  auto it = values.find(metric);
  return it == values.end() ? 0 : it->second;
}

std::string FindNcu() {
  if (const char* env = std::getenv("KBENCH_NCU"); env && *env) return env;
  std::vector<std::string> dirs = {"/usr/local/cuda/bin"};
  if (const char* path = std::getenv("PATH")) {
    for (absl::string_view d : absl::StrSplit(path, ':')) {
      dirs.emplace_back(d);
    }
  }
  for (const std::string& d : dirs) {
    std::string p = d + "/ncu";
    if (access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class CountersNcuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    KB_SKIP_WITHOUT_GPU();
    ncu_ = FindNcu();
    if (ncu_.empty()) GTEST_SKIP() << "ncu is not installed (or KBENCH_NCU)";
    auto kbd = KbdProcess::Start({});
    ASSERT_TRUE(kbd.ok()) << kbd.status();
    kbd_ = std::move(*kbd);
    auto worker = testing::StartWorker(kbd_->address(), "", 0,
                                       {"--save-jobs", jobs_.path()});
    ASSERT_TRUE(worker.ok()) << worker.status();
    worker_ = std::move(*worker);
    stub_ = v1::Kbench::NewStub(grpc::CreateChannel(
        kbd_->address(), grpc::InsecureChannelCredentials()));
    for (int i = 0; i < 600; ++i) {
      v1::GetGpuSpecsRequest req;
      v1::GetGpuSpecsResponse resp;
      grpc::ClientContext ctx;
      if (stub_->GetGpuSpecs(&ctx, req, &resp).ok() && resp.gpus_size() > 0) {
        return;
      }
      absl::SleepFor(absl::Milliseconds(100));
    }
    FAIL() << "the worker did not connect; kbd log:\n" << kbd_->Log();
  }

  // The kernel at repository path `path`, at `shape_set`.
  static v1::KernelRequest KernelAt(const std::string& path,
                                    const std::string& shape_set) {
    v1::KernelRequest k;
    k.set_source(testing::ReadSourceFile(path));
    k.set_filename(path.substr(path.rfind('/') + 1));
    k.set_shape_set(shape_set);
    return k;
  }

  // Profiles `path` at `shape_set` through kbd; returns the response.
  v1::ProfileKernelResponse Profile(const std::string& path,
                                    const std::string& shape_set) {
    v1::ProfileKernelRequest req;
    *req.mutable_kernel() = KernelAt(path, shape_set);
    req.mutable_kernel()->set_profile_preset("full");
    v1::ProfileKernelResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(120));
    const grpc::Status s = stub_->ProfileKernel(&ctx, req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return resp;
  }

  // Runs the saved job `job_id` as a correctness run of `trials` trials at
  // its timing shape under ncu, profiling at most `launch_count` launches
  // of `entry` for `metrics`; returns ncu's rows.
  std::vector<NcuRow> NcuRows(const std::string& job_id,
                              const std::string& entry,
                              const std::vector<std::string>& metrics,
                              int trials, int launch_count) {
    v1::RunnerJob job;
    {
      std::ifstream in(jobs_.path() + "/" + job_id + ".pb", std::ios::binary);
      EXPECT_TRUE(in && job.ParseFromIstream(&in)) << "no saved job " << job_id;
    }
    job.set_kind(v1::JOB_KIND_CORRECTNESS);
    job.set_trials(trials);
    job.clear_check_sets();  // The hidden cases too.
    v1::ShapeSet* set = job.add_check_sets();
    set->set_name(job.timing_set());
    *set->add_shapes() = job.timing_shape();
    const std::string job_path = work_.path() + "/ncu-job.pb";
    {
      std::ofstream out(job_path, std::ios::binary);
      EXPECT_TRUE(job.SerializeToOstream(&out));
    }
    const std::string csv = work_.path() + "/ncu.csv";
    std::vector<std::string> argv = {
        ncu_,   "--clock-control", "none",       "--print-units",
        "base", "--csv",           "--log-file", csv};
    // KBENCH_NCU_ARGS: extra ncu flags, space-separated, for investigating
    // a mismatch (e.g. "--cache-control none").
    if (const char* extra = std::getenv("KBENCH_NCU_ARGS")) {
      for (absl::string_view a :
           absl::StrSplit(extra, ' ', absl::SkipEmpty())) {
        argv.emplace_back(a);
      }
    }
    for (const std::string& a :
         {std::string("-k"), "regex:^" + entry + "$",
          std::string("--launch-count"), std::to_string(launch_count),
          std::string("--metrics"), absl::StrJoin(metrics, ","),
          testing::BinDir() + "/kbrunner", std::string("--oneshot"), job_path,
          work_.path() + "/ncu-result.pb"}) {
      argv.push_back(a);
    }
    const testing::CommandResult r =
        testing::RunCommand(argv, {}, absl::Seconds(240));
    EXPECT_EQ(r.exit_code, 0) << "ncu failed:\n" << r.out << r.err;
    std::vector<NcuRow> rows = ParseNcuCsv(ReadAll(csv));
    EXPECT_FALSE(rows.empty()) << "no rows in ncu's CSV:\n" << ReadAll(csv);
    return rows;
  }

  // ncu's values of the first launch of `entry` in a one-trial run of the
  // saved job `job_id`, by metric (every compared metric).
  std::map<std::string, double> Ncu(const std::string& job_id,
                                    const std::string& entry) {
    std::vector<std::string> metrics;
    for (const Compared& c : kCompared) metrics.push_back(c.metric);
    std::map<std::string, double> values;
    std::string first_id;
    for (const NcuRow& row : NcuRows(job_id, entry, metrics, 1, 1)) {
      if (first_id.empty()) first_id = row.id;
      if (row.id == first_id) values[row.metric] = row.value;
    }
    return values;
  }

  // Compares and prints the table; returns the number of mismatches.
  // The L2 hit rate of a kernel with too few L2 lookups is not stable
  // from run to run, in ncu either (65% to 88% for the naive kernel at the
  // default shape); the profile labels it so (`suspects`), and then it is
  // shown but not compared.
  void Compare(const std::string& title,
               const std::map<std::string, double>& ours,
               const std::map<std::string, double>& ours_again,
               const std::map<std::string, double>& ncu,
               const std::map<std::string, double>& ncu_again,
               const std::vector<std::string>& suspects) {
    std::cout << "\n"
              << title << "\n\n| metric | kbench | ncu | diff | rule |\n"
              << "|---|---:|---:|---:|---|\n";
    for (const Compared& c : kCompared) {
      auto a = ours.find(c.metric);
      auto b = ncu.find(c.metric);
      if (a == ours.end() || b == ncu.end()) {
        ADD_FAILURE() << c.metric << " missing: kbench " << (a != ours.end())
                      << ", ncu " << (b != ncu.end());
        continue;
      }
      const double x = a->second, y = b->second;
      const double rel = y != 0 ? (x - y) / std::fabs(y) : (x == 0 ? 0 : 1);
      bool ok = false;
      const char* rule = "";
      std::string rule_note;
      // One of two profiles against one of two ncu runs (bytes, rates):
      // whether `near` holds for any pair; notes the second values.
      const double x2 = Get(ours_again, c.metric);
      const double y2 = Get(ncu_again, c.metric);
      auto any_pair = [&](const std::function<bool(double, double)>& near) {
        if (x2 != x) {
          rule_note += absl::StrFormat(" (kbench again: %.6g)", x2);
        }
        if (y2 != y) rule_note += absl::StrFormat(" (ncu again: %.6g)", y2);
        return near(x, y) || near(x, y2) || near(x2, y) || near(x2, y2);
      };
      switch (c.kind) {
        case Kind::kCount:
          ok = x == y;
          rule = "equal";
          break;
        case Kind::kBytes:
        case Kind::kWrites: {
          // Within 3% of the launch's DRAM traffic (read + write, by ncu),
          // or a floor, for one of two profiles against one of two ncu
          // runs. DRAM counters count all traffic, also from outside the
          // launch, and vary between runs of the same launch, in ncu as in
          // ours.
          // Reads, measured on the H200: at the default shape (about 40 KiB)
          // ncu read 40,704 to 41,216 B and ours 40,960 to 47,104 B, a
          // spread of over 6 KiB that no relative rule at that size can
          // tell from an error, hence an 8 KiB floor; at the medium shape
          // (5.25 MB) ncu's runs agreed within 0.01% and ours read up to
          // 2.2% above them (the second profile up to 0.7%), hence 3%.
          // Why our first profile reads more is not known.
          // Writes: at both shapes the output (2.6 KiB, 1 MiB) stays in the
          // L2, so the launch itself writes nothing to DRAM; the counter
          // sees write-back of lines dirtied before it, in bursts of 64 or
          // 256 KiB: ncu's own runs of the default launch wrote 0, 65,536
          // or 262,144 B (H200), and both of our medium profiles wrote
          // 262,144 B against ncu's 0 in one of seven H100 gpu-label
          // passes (2026-12-06). Hence a 256 KiB floor: a kernel that wrote
          // its 1 MiB output through to DRAM still fails at the medium
          // shape.
          const bool writes = c.kind == Kind::kWrites;
          const double traffic = Get(ncu, "dram__bytes_read.sum") +
                                 Get(ncu, "dram__bytes_write.sum");
          const double tol =
              std::max(0.03 * traffic, writes ? 262144.0 : 8192.0);
          ok = any_pair(
              [&](double p, double q) { return std::fabs(p - q) <= tol; });
          rule = writes ? "within 3% of DRAM traffic or one 256 KiB write-back "
                          "burst"
                        : "within 3% of DRAM traffic or 8 KiB";
          break;
        }
        case Kind::kTime:
          // One launch's duration: ncu's own run-to-run spread at the
          // default shape (14 us) is 5% (13,344 to 14,016 ns over six
          // runs), and ours read 1-9% above ncu's there (cause not found);
          // at the medium shape (1.1 ms) both agree within 0.3%.
          // bench/timing_truth holds the 5% rule for the times the service
          // reports.
          ok = std::fabs(x - y) <= 0.10 * std::fabs(y);
          rule = "within 10%";
          break;
        case Kind::kRate: {
          // ncu prints rates with two decimals: half a unit of the last
          // digit is its own rounding (eligible warps read 0.14 or 0.15).
          // Like bytes, one of two profiles against one of two ncu runs:
          // per-cycle averages of a launch of 12 blocks on 132 SMs move
          // between runs of the same launch (H200, 2026-12-04: active warps
          // per cycle 1.02 in ours against 1.09 in ncu's first run, one
          // gpu label run in two).
          ok = any_pair([&](double p, double q) {
            return std::fabs(p - q) <= 0.05 * std::fabs(q) + 0.005 ||
                   (absl::StrContains(c.metric, "pct") &&
                    std::fabs(p - q) <= 0.5);
          });
          rule = "within 5%";
          break;
        }
      }
      if (std::string(c.metric) == "lts__t_sector_hit_rate.pct") {
        for (const std::string& why : suspects) {
          if (absl::StartsWith(why, "l2_hit_rate_pct") &&
              absl::StrContains(why, "too few")) {
            ok = true;
            rule = "labelled unstable (too few L2 lookups), not compared:";
          }
        }
      }
      std::cout << absl::StrFormat("| %s | %.6g | %.6g | %+.2f%% | %s%s %s |\n",
                                   c.metric, x, y, 100 * rel, rule, rule_note,
                                   ok ? "ok" : "MISMATCH");
      EXPECT_TRUE(ok) << title << ": " << c.metric << " kbench " << x
                      << " vs ncu " << y;
    }
    std::cout.flush();
  }

  std::string ncu_;
  testing::TempDir jobs_, work_;
  std::unique_ptr<KbdProcess> kbd_;
  std::unique_ptr<testing::Child> worker_;
  // The worker (this test's environment) counts global loads per line
  // unless KBENCH_LINE_LOADS=0.
  const bool line_loads_ = [] {
    const char* off = std::getenv("KBENCH_LINE_LOADS");
    return off == nullptr || std::string(off) != "0";
  }();
  std::unique_ptr<v1::Kbench::Stub> stub_;
};

TEST_F(CountersNcuTest, NaiveKernelMatchesNcuAtDefaultAndMediumShapes) {
  for (const std::string shapes : {"default", "medium"}) {
    SCOPED_TRACE(shapes);
    const v1::ProfileKernelResponse resp =
        Profile("kernels/examples/gather_linear_naive.cu", shapes);
    ASSERT_EQ(resp.result().verdict(), v1::VERDICT_PASSED)
        << resp.result().DebugString();
    const v1::ProfileReport& p = resp.result().profile();
    ASSERT_TRUE(p.counters_unavailable().empty()) << p.counters_unavailable();
    ASSERT_EQ(p.launches_size(), 1) << p.DebugString();
    const v1::LaunchProfile& l = p.launches(0);
    ASSERT_TRUE(l.has_counters()) << p.DebugString();
    EXPECT_EQ(p.preset(), "full");
    EXPECT_GT(p.passes(), 1);
    EXPECT_GE(p.reference_launches_size(), 1);
    if (shapes == "default") {
      // The known facts of the naive kernel at the default shape.
      EXPECT_EQ(l.counters().global_load_requests(), 6168);
      EXPECT_EQ(l.counters().global_load_sectors(), 89172);
      EXPECT_NEAR(l.counters().global_load_sectors_per_request(), 14.46, 0.005);
      EXPECT_EQ(l.registers(), 28);
      EXPECT_EQ(l.reserved_smem_bytes(), 1024);
    }
    std::map<std::string, double> ours(l.counters().metrics().begin(),
                                       l.counters().metrics().end());
    // A second profile, for the DRAM bytes (see Compare).
    const v1::ProfileKernelResponse again =
        Profile("kernels/examples/gather_linear_naive.cu", shapes);
    ASSERT_EQ(again.result().profile().launches_size(), 1);
    const v1::CounterProfile& c2 =
        again.result().profile().launches(0).counters();
    const std::map<std::string, double> ours_again(c2.metrics().begin(),
                                                   c2.metrics().end());
    const std::map<std::string, double> ncu = Ncu(resp.job_id(), l.entry());
    const std::map<std::string, double> ncu_again =
        Ncu(resp.job_id(), l.entry());
    const std::vector<std::string> suspects(l.counters().suspect().begin(),
                                            l.counters().suspect().end());
    if (shapes == "medium") {
      // Plenty of L2 traffic: the hit rate is compared, not excused.
      for (const std::string& why : suspects) {
        EXPECT_FALSE(absl::StrContains(why, "too few")) << why;
      }
    }
    Compare(absl::StrCat("naive kernel, ", shapes, " shape (", p.shape(),
                         "), job ", resp.job_id()),
            ours, ours_again, ncu, ncu_again, suspects);
    // PC sampling maps the samples to the kernel's lines; the inner loop's
    // multiply-add is among the hottest three.
    EXPECT_FALSE(p.hot_lines().empty()) << p.DebugString();
    EXPECT_GT(p.pc_samples(), 0);
    bool fma_line = false;
    int64_t line_requests = 0;
    for (int i = 0; i < p.hot_lines_size(); ++i) {
      const v1::SourceLine& h = p.hot_lines(i);
      std::cout << "hot line " << h.line() << " (" << h.sample_pct()
                << "% of samples, " << h.global_load_requests()
                << " load requests, " << h.global_load_sectors()
                << " sectors): " << h.text() << "\n";
      line_requests += h.global_load_requests();
      if (!absl::StrContains(h.text(), "acc +=")) continue;
      if (i < 3) fma_line = true;
      if (!line_loads_) continue;
      // SASS metrics per line: the loop's two loads per iteration, for the
      // warps that hold outputs. At the default shape 24 warps (2 of 8 per
      // block hold k < 56) x R*H = 128 iterations x 2 = 6,144 of the
      // kernel's 6,168 requests (the other 24 load the bias), and they
      // touch most of its sectors.
      EXPECT_GT(h.global_load_sectors_per_request(), 8) << h.DebugString();
      if (shapes == "default") {
        EXPECT_EQ(h.global_load_requests(), 6144) << h.DebugString();
        EXPECT_LE(h.global_load_sectors(), 89172);
        EXPECT_GT(h.global_load_sectors(), 80000);
      }
    }
    EXPECT_TRUE(fma_line) << p.DebugString();
    if (!line_loads_) {
      bool said = false;
      for (const v1::MissingFigure& m : p.missing()) {
        said |= m.figure() == "hot_lines.global_load_sectors_per_request";
      }
      EXPECT_TRUE(said) << "per-line loads off, but not said in missing";
    }
    // No line can load more than the whole kernel; with per-line loads on,
    // the hot lines hold all of its loads (the bias load's line is among
    // them).
    EXPECT_LE(line_requests, l.counters().global_load_requests());
    if (line_loads_) {
      EXPECT_EQ(line_requests, l.counters().global_load_requests());
    }
    std::cout << "kbench profile: preset " << p.preset() << ", " << p.passes()
              << " passes, counters " << p.counters_ms() << " ms; top stall "
              << (l.top_stalls_size() > 0 ? l.top_stalls(0).reason() : "-")
              << "; suspect: " << absl::StrJoin(l.counters().suspect(), "; ")
              << "\n";
  }
}

// The time a submit reports on its speedup's basis (GPU time) against ncu's
// gpu__time_duration of the same kernel at the same shape: within 3% for
// plans of 10 us or more, within 0.5 us below (issue 15). ncu times the
// launches of a correctness run of the saved job (12 launches, the median);
// ours is the submit's median over its timed runs. bench/timing_truth holds
// the same rule over 10 submits.
TEST_F(CountersNcuTest, SubmitGpuTimeAgreesWithNcu) {
  std::cout
      << "\n| shape | kbench GPU time | ncu gpu__time_duration (n) | diff "
         "| rule |\n|---|---:|---:|---:|---|\n";
  for (const std::string shapes : {"default", "medium"}) {
    SCOPED_TRACE(shapes);
    v1::SubmitKernelRequest req;
    *req.mutable_kernel() =
        KernelAt("kernels/examples/gather_linear_naive.cu", shapes);
    v1::SubmitKernelResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(120));
    const grpc::Status st = stub_->SubmitKernel(&ctx, req, &resp);
    ASSERT_TRUE(st.ok()) << st.error_message();
    ASSERT_EQ(resp.result().verdict(), v1::VERDICT_PASSED)
        << resp.result().DebugString();
    const v1::Stats& gpu = resp.result().timing().kernel_gpu();
    ASSERT_GT(gpu.n(), 0) << resp.result().timing().DebugString();
    const double ours = gpu.median_us();
    std::vector<double> ncu_us;
    for (const NcuRow& row : NcuRows(resp.job_id(), "gather_linear",
                                     {"gpu__time_duration.sum"}, 6, 12)) {
      if (row.metric == "gpu__time_duration.sum") {
        ncu_us.push_back(row.value * 1e-3);  // ns
      }
    }
    ASSERT_GE(ncu_us.size(), 6u);
    std::sort(ncu_us.begin(), ncu_us.end());
    const double theirs = ncu_us[ncu_us.size() / 2];
    const double tol = theirs >= 10.0 ? 0.03 * theirs : 0.5;
    std::cout << absl::StrFormat(
        "| %s | %.3f us | %.3f us (%zu) | %+.3f us (%+.2f%%) | within %s %s "
        "|\n",
        shapes, ours, theirs, ncu_us.size(), ours - theirs,
        100 * (ours - theirs) / theirs, theirs >= 10.0 ? "3%" : "0.5 us",
        std::fabs(ours - theirs) <= tol ? "ok" : "MISMATCH");
    EXPECT_LE(std::fabs(ours - theirs), tol)
        << shapes << ": GPU time " << ours << " us vs ncu " << theirs << " us";
  }
  std::cout.flush();
}

}  // namespace
}  // namespace kbench
