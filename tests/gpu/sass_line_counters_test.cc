// SassLineCounters on a real GPU: global-load requests and sectors per
// source line of a kernel whose two loads are known, one coalesced (4
// sectors per request) and one strided by 32 floats (32 sectors per
// request), then a plan of two kernels, then a workspace memset before the
// kernel; each in a process of its own, since SASS metrics collect once per
// process (sass_line_counters.h), as in the runner's line-loads child
// (runner/profile/line_loads.h), which profiles reach through kbd in
// tests/gpu/counters_ncu_test.cc. Skips without an NVIDIA GPU.
#include "runner/profile/sass_line_counters.h"

#include <cuda.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/paths.h"
#include "base/status_macros.h"
#include "compiler/nvrtc_compiler.h"
#include "runner/device/cuda_status.h"
#include "runner/device/device_buffer.h"
#include "runner/device/device_context.h"
#include "runner/profile/pc_sampler.h"
#include "testing/process.h"

namespace kbench {
namespace {

constexpr char kSource[] = R"(extern "C" __global__ void two_loads(
    const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float a = x[i];
  const float b = x[(i * 32) % n];
  y[i] = a + b;
}
extern "C" __global__ void one_load(const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i] = 2.f * x[i] + n;
}
)";
constexpr int kN = 1 << 20;  // Threads, one per element.

class SassLineCountersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    KB_SKIP_WITHOUT_GPU();
    if (ctx_ == nullptr) {
      auto ctx = DeviceContext::Create({});
      ASSERT_TRUE(ctx.ok()) << ctx.status();
      ctx_ = std::move(*ctx).release();
      sass_ = new SassLineCounters(ctx_);
    }
    CompileOptions opt;
    opt.arch = ctx_->spec().arch();
    auto out = NvrtcCompiler(opt).Compile(kSource, "two_loads.cu", opt.arch);
    ASSERT_TRUE(out.ok() && out->report.success()) << out.status();
    cubin_ = out->cubin;
    auto x = DeviceBuffer::Allocate(kN * sizeof(float));
    auto y = DeviceBuffer::Allocate(kN * sizeof(float));
    ASSERT_TRUE(x.ok() && y.ok());
    x_ = std::move(*x);
    y_ = std::move(*y);
  }

  // Loads a fresh copy of the module (as the line-loads child does) and
  // returns a function that launches `entry` from it, keeping it loaded.
  PcSampler::Loader Loader(const char* entry) {
    return [this, entry]() -> absl::StatusOr<std::function<absl::Status()>> {
      auto module = std::make_shared<CUmodule>(nullptr);
      CUfunction fn = nullptr;
      RETURN_IF_ERROR(LoadEntry(entry, module.get(), &fn));
      return [this, module, fn]() { return Launch(fn); };
    };
  }

  // Loads `entry` from a new copy of the module.
  absl::Status LoadEntry(const char* entry, CUmodule* module, CUfunction* fn) {
    const CudaDriver& drv = ctx_->driver();
    if (drv.ModuleLoadData(module, cubin_.data()) != CUDA_SUCCESS ||
        drv.ModuleGetFunction(fn, *module, entry) != CUDA_SUCCESS) {
      return absl::InternalError(absl::StrCat("loading ", entry));
    }
    return absl::OkStatus();
  }

  // Launches `fn` (two_loads or one_load) over x_ and y_.
  absl::Status Launch(CUfunction fn) {
    void* x = x_.get();
    void* y = y_.get();
    int n = kN;
    void* args[] = {&x, &y, &n};
    if (ctx_->driver().LaunchKernel(fn, kN / 256, 1, 1, 256, 1, 1, 0,
                                    ctx_->stream(), args,
                                    nullptr) != CUDA_SUCCESS) {
      return absl::InternalError("launch");
    }
    return absl::OkStatus();
  }

  // SASS metrics count only in the first collection of a process (see
  // sass_line_counters.h), so each test runs its body in a fresh process of
  // this binary, as the runner's line-loads child does. Returns true in the
  // parent, once the child is checked; false in the child.
  static bool RanInOwnProcess() {
    if (std::getenv("KBENCH_SASS_TEST_CHILD") != nullptr) return false;
    const ::testing::TestInfo* info =
        ::testing::UnitTest::GetInstance()->current_test_info();
    const std::string self = ExePath();
    EXPECT_FALSE(self.empty());
    if (self.empty()) return true;
    auto child = testing::Child::Start(
        {self, absl::StrCat("--gtest_filter=", info->test_suite_name(), ".",
                            info->name())},
        {{"KBENCH_SASS_TEST_CHILD", "1"}});
    EXPECT_TRUE(child.ok()) << child.status();
    if (!child.ok()) return true;
    const int code = (*child)->Wait(absl::Seconds(120));
    std::cout << (*child)->Stdout();
    EXPECT_EQ(code, 0) << (*child)->Stderr();
    return true;
  }

  // Collects the loads of kernel launch `launch` of a plan (0: two_loads,
  // 1: one_load, after two_loads ran on another copy of the module), after
  // a memset of y when `memset_first` (a workspace zero-fill), and checks
  // them: two_loads' lines 4 (coalesced) and 5 (strided by 32 floats), or
  // one_load's line 10 alone; n/32 warps each.
  void CollectAndCheck(const char* when, bool memset_first, int launch) {
    SCOPED_TRACE(when);
    if (memset_first) {
      ASSERT_EQ(
          cudaMemsetAsync(y_.get(), 0, kN * sizeof(float), ctx_->stream()),
          cudaSuccess);
    }
    CUmodule before = nullptr;
    if (launch == 1) {
      CUfunction fn = nullptr;
      ASSERT_TRUE(LoadEntry("two_loads", &before, &fn).ok());
      ASSERT_TRUE(Launch(fn).ok());
    }
    ASSERT_EQ(cudaStreamSynchronize(ctx_->stream()), cudaSuccess);
    auto r =
        sass_->Collect(cubin_, Loader(launch == 0 ? "two_loads" : "one_load"));
    ASSERT_TRUE(r.ok()) << when << ": " << r.status();
    std::cout << when << ":\n";
    for (const auto& [where, loads] : *r) {
      std::cout << "  " << where.first << ":" << where.second << " "
                << loads.requests << " requests, " << loads.sectors
                << " sectors\n";
    }
    const std::map<int, int64_t> sectors_per_request =
        launch == 0 ? std::map<int, int64_t>{{4, 4}, {5, 32}}
                    : std::map<int, int64_t>{{10, 4}};
    EXPECT_EQ(r->size(), sectors_per_request.size());
    for (const auto& [line, per_request] : sectors_per_request) {
      auto it = r->find({"two_loads.cu", line});
      ASSERT_NE(it, r->end()) << "line " << line;
      EXPECT_EQ(it->second.requests, kN / 32) << "line " << line;
      EXPECT_EQ(it->second.sectors, per_request * (kN / 32)) << "line " << line;
    }
  }

  // Made once per process; never freed (the process ends with them).
  static inline DeviceContext* ctx_ = nullptr;
  static inline SassLineCounters* sass_ = nullptr;
  std::string cubin_;
  DeviceBuffer x_, y_;
};

TEST_F(SassLineCountersTest, CountsLoadsAndSectorsPerLine) {
  if (RanInOwnProcess()) return;
  CollectAndCheck("a fresh context", false, 0);
  // For counter_profiler_test: a SASS-metrics process that stays alive
  // until its parent kills it.
  if (const char* linger = std::getenv("KBENCH_TEST_LINGER_MARKER")) {
    std::ofstream(linger) << "done\n";
    std::this_thread::sleep_for(std::chrono::seconds(60));
  }
}

// The second kernel of a plan, as in the two-stage example: the first ran
// on another copy of the module.
TEST_F(SassLineCountersTest, CountsTheSecondKernelOfAPlan) {
  if (RanInOwnProcess()) return;
  CollectAndCheck("two kernels, the second", false, 1);
}

// A workspace zero-fill (cudaMemsetAsync) before the kernel.
TEST_F(SassLineCountersTest, CountsAfterAWorkspaceMemset) {
  if (RanInOwnProcess()) return;
  CollectAndCheck("memset, then the kernel", true, 0);
}

}  // namespace
}  // namespace kbench
