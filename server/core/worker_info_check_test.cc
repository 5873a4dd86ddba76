// Tests of ValidateWorkerInfo and IsGpuArch (server/core/worker_info_check.h):
// what kbd refuses of a worker's facts before it stores any: broken or fake
// GPU specs, links that are out of bounds or name the wrong GPUs, and arch
// names (and that WorkerRegistry::Register refuses a broken spec too).
#include "server/core/worker_info_check.h"

#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/worker_info_fixtures.h"
#include "server/core/worker_registry.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;
using testing::Valid;

const absl::Time kT0 = absl::FromUnixSeconds(1700000000);

TEST(WorkerInfoCheckTest, ValidWorkerInfoPasses) {
  EXPECT_TRUE(ValidateWorkerInfo(Valid("h:gpu0")).ok())
      << ValidateWorkerInfo(Valid("h:gpu0"));
  // Limits a GPU does not report (0) are allowed: the fake runner's spec.
  v1::WorkerInfo sparse = Valid("h:gpu1");
  sparse.mutable_spec()->clear_smem_per_block_bytes();
  sparse.mutable_spec()->clear_smem_per_block_optin_bytes();
  sparse.mutable_spec()->clear_max_block_dims();
  EXPECT_TRUE(ValidateWorkerInfo(sparse).ok()) << ValidateWorkerInfo(sparse);
}

// Links come from the network: bounded, and each names another GPU once.
TEST(WorkerInfoCheckTest, LinksAreBoundedAndNameOtherGpus) {
  v1::WorkerInfo info = Valid("h:gpu1");
  info.set_gpu_index(1);
  v1::GpuLink* good = info.add_links();
  good->set_peer_gpu_index(0);
  good->set_peer_access(true);
  good->set_performance_rank(1);
  good->set_copy_gbps(360);
  EXPECT_TRUE(ValidateWorkerInfo(info).ok()) << ValidateWorkerInfo(info);
  const std::vector<
      std::pair<std::function<void(v1::WorkerInfo*)>, const char*>>
      bad = {
          {[](v1::WorkerInfo* i) {
             i->mutable_links(0)->set_peer_gpu_index(1);
           },
           "not this one's 1"},
          {[](v1::WorkerInfo* i) { *i->add_links() = i->links(0); }, "once"},
          {[](v1::WorkerInfo* i) {
             i->mutable_links(0)->set_peer_gpu_index(4096);
           },
           "0 to 1023"},
          {[](v1::WorkerInfo* i) {
             i->mutable_links(0)->set_copy_gbps(std::nan(""));
           },
           "copy_gbps"},
          {[](v1::WorkerInfo* i) { i->mutable_links(0)->set_copy_gbps(1e9); },
           "copy_gbps"},
          {[](v1::WorkerInfo* i) {
             i->mutable_links(0)->set_performance_rank(-1);
           },
           "performance_rank"},
          {[](v1::WorkerInfo* i) {
             for (int p = 2; p < 70; ++p) i->add_links()->set_peer_gpu_index(p);
           },
           "at most 64"},
      };
  for (const auto& [edit, want] : bad) {
    v1::WorkerInfo broken = info;
    edit(&broken);
    const absl::Status s = ValidateWorkerInfo(broken);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << want;
    EXPECT_THAT(s.message(), HasSubstr("worker.links")) << want;
    EXPECT_THAT(s.message(), HasSubstr(want));
  }
}

TEST(WorkerInfoCheckTest, FakeOrBrokenSpecsAreInvalidArgument) {
  struct Case {
    const char* what;
    std::function<void(v1::WorkerInfo*)> edit;
    const char* field;
  };
  const std::vector<Case> cases = {
      {"no id", [](v1::WorkerInfo* i) { i->clear_worker_id(); }, "worker_id"},
      {"newline in id",
       [](v1::WorkerInfo* i) { i->set_worker_id("w\nFORGED LOG LINE"); },
       "worker_id"},
      {"huge id",
       [](v1::WorkerInfo* i) { i->set_worker_id(std::string(4096, 'a')); },
       "worker_id"},
      {"1 thread per block",
       [](v1::WorkerInfo* i) {
         i->mutable_spec()->set_max_threads_per_block(1);
       },
       "max_threads_per_block"},
      {"no threads reported",
       [](v1::WorkerInfo* i) {
         i->mutable_spec()->clear_max_threads_per_block();
       },
       "max_threads_per_block"},
      {"0 SMs", [](v1::WorkerInfo* i) { i->mutable_spec()->set_sm_count(0); },
       "sm_count"},
      {"negative smem",
       [](v1::WorkerInfo* i) {
         i->mutable_spec()->set_smem_per_block_bytes(-5);
       },
       "smem_per_block_bytes"},
      {"tiny smem",
       [](v1::WorkerInfo* i) {
         i->mutable_spec()->set_smem_per_block_bytes(16);
       },
       "smem_per_block_bytes"},
      {"grid of 1",
       [](v1::WorkerInfo* i) { i->mutable_spec()->set_max_grid_dims(0, 1); },
       "max_grid_dims"},
      {"two block dims",
       [](v1::WorkerInfo* i) {
         i->mutable_spec()->mutable_max_block_dims()->RemoveLast();
       },
       "max_block_dims"},
      {"no name", [](v1::WorkerInfo* i) { i->mutable_spec()->clear_name(); },
       "name"},
      {"name not UTF-8",
       [](v1::WorkerInfo* i) { i->mutable_spec()->set_name("GPU \xff"); },
       "name"},
      {"long name",
       [](v1::WorkerInfo* i) {
         i->mutable_spec()->set_name(std::string(1000, 'x'));
       },
       "name"},
      {"arch not sm_NN",
       [](v1::WorkerInfo* i) { i->mutable_spec()->set_arch("compute_90"); },
       "arch"},
      {"arch with a path",
       [](v1::WorkerInfo* i) { i->mutable_spec()->set_arch("sm_90 -I/etc"); },
       "arch"},
      {"arch against cc",
       [](v1::WorkerInfo* i) { i->mutable_spec()->set_arch("sm_80"); },
       "compute capability"},
      {"NaN bandwidth",
       [](v1::WorkerInfo* i) {
         i->mutable_spec()->set_measured_copy_gbps(std::nan(""));
       },
       "measured_copy_gbps"},
      {"no spec", [](v1::WorkerInfo* i) { i->clear_spec(); }, "spec"},
      {"another build", [](v1::WorkerInfo* i) { i->set_version("0.0.9-old"); },
       "worker.version is '0.0.9-old' but this kbd is " KBENCH_VERSION},
      {"no version", [](v1::WorkerInfo* i) { i->clear_version(); },
       "worker.version"},
  };
  for (const Case& c : cases) {
    v1::WorkerInfo info = Valid("h:gpu0");
    c.edit(&info);
    const absl::Status s = ValidateWorkerInfo(info);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.what;
    EXPECT_THAT(s.message(), HasSubstr(c.field)) << c.what << ": " << s;
    // Register refuses it too, and records nothing.
    WorkerRegistry r(WorkerRegistry::Options{});
    EXPECT_EQ(r.Register(info, kT0).code(), absl::StatusCode::kInvalidArgument)
        << c.what;
    EXPECT_TRUE(r.Live(kT0).empty()) << c.what;
  }
}

TEST(WorkerInfoCheckTest, ArchNames) {
  for (const char* ok : {"sm_90", "sm_80", "sm_100", "sm_90a", "sm_120f"}) {
    EXPECT_TRUE(IsGpuArch(ok)) << ok;
  }
  for (const char* bad : {"", "sm_", "sm_9", "sm_1000", "sm_09", "sm_90b",
                          "compute_90", "SM_90", "sm_9x", "sm_90 "}) {
    EXPECT_FALSE(IsGpuArch(bad)) << bad;
  }
}

}  // namespace
}  // namespace kbench
