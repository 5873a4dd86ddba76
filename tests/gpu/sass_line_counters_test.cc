// SassLineCounters on a real GPU: global-load requests and sectors per
// source line of a kernel whose two loads are known, one coalesced (4
// sectors per request) and one strided by 32 floats (32 sectors per
// request), in a fresh context. (In a context where the range profiler has
// run, cuptiSassMetricsSetConfig fails with CUPTI_ERROR_OUT_OF_MEMORY on the
// H200, and after SASS metrics PC sampling finds no user code: hence the
// child process of worker/runner/line_loads.h, which profiles reach
// through kbd in tests/gpu/counters_ncu_test.cc.) Skips without an NVIDIA
// GPU.
#include "worker/runner/sass_line_counters.h"

#include <cuda.h>
#include <gtest/gtest.h>

#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <utility>

#include "common/nvrtc_compiler.h"
#include "common/status_macros.h"
#include "tests/testutil/process.h"
#include "worker/runner/cuda_status.h"
#include "worker/runner/device_buffer.h"
#include "worker/runner/device_context.h"
#include "worker/runner/pc_sampler.h"

namespace kbench {
namespace {

constexpr char kSource[] = R"(extern "C" __global__ void two_loads(
    const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float a = x[i];
  const float b = x[(i * 32) % n];
  y[i] = a + b;
}
)";
constexpr int kN = 1 << 20;  // Threads, one per element.

class SassLineCountersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    KB_SKIP_WITHOUT_GPU();
    auto ctx = DeviceContext::Create({});
    ASSERT_TRUE(ctx.ok()) << ctx.status();
    ctx_ = std::move(*ctx);
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

  // Loads a fresh module (as the profile's reload does) and returns a
  // launcher that keeps it loaded.
  PcSampler::Loader Loader() {
    return [this]() -> absl::StatusOr<std::function<absl::Status()>> {
      const CudaDriver& drv = ctx_->driver();
      auto module = std::make_shared<CUmodule>(nullptr);
      if (drv.ModuleLoadData(module.get(), cubin_.data()) != CUDA_SUCCESS) {
        return absl::InternalError("loading the module");
      }
      CUfunction fn = nullptr;
      if (drv.ModuleGetFunction(&fn, *module, "two_loads") != CUDA_SUCCESS) {
        return absl::InternalError("no two_loads");
      }
      return [this, module, fn]() -> absl::Status {
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
      };
    };
  }

  // Collects and checks the two load lines.
  void CollectAndCheck(const char* when) {
    SCOPED_TRACE(when);
    SassLineCounters sass(ctx_.get());
    auto r = sass.Collect(cubin_, Loader());
    ASSERT_TRUE(r.ok()) << when << ": " << r.status();
    std::cout << when << ":\n";
    for (const auto& [where, loads] : *r) {
      std::cout << "  " << where.first << ":" << where.second << " "
                << loads.requests << " requests, " << loads.sectors
                << " sectors\n";
    }
    // Line 4 (coalesced) and line 5 (strided); n/32 warps each.
    auto a = r->find({"two_loads.cu", 4});
    auto b = r->find({"two_loads.cu", 5});
    ASSERT_NE(a, r->end());
    ASSERT_NE(b, r->end());
    EXPECT_EQ(a->second.requests, kN / 32);
    EXPECT_EQ(a->second.sectors, 4 * (kN / 32));
    EXPECT_EQ(b->second.requests, kN / 32);
    EXPECT_EQ(b->second.sectors, 32 * (kN / 32));
  }

  std::unique_ptr<DeviceContext> ctx_;
  std::string cubin_;
  DeviceBuffer x_, y_;
};

TEST_F(SassLineCountersTest, CountsLoadsAndSectorsPerLine) {
  CollectAndCheck("a fresh context");
}

}  // namespace
}  // namespace kbench
