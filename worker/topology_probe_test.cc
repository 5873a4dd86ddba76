// Tests of ProbeTopology (worker/topology_probe.h) with the stand-in runner
// (kb_fake_runner, whose links come from KB_FAKE_TOPOLOGY) and with runners
// that fail or write something else.
#include "worker/topology_probe.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/process.h"
#include "worker/runner_process_fixtures.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;

class TopologyProbeTest : public ::testing::Test {
 protected:
  void TearDown() override { unsetenv("KB_FAKE_TOPOLOGY"); }
  // An executable shell script in the test's folder.
  std::string Script(const std::string& body) {
    std::string path = dir_.path() + "/runner.sh";
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    chmod(path.c_str(), 0755);
    return path;
  }
  testing::TempDir dir_;
};

TEST_F(TopologyProbeTest, ReportsALinkPerOtherGpuOfTheHost) {
  // Four GPUs; GPU 3 reaches none.
  setenv("KB_FAKE_TOPOLOGY", "0,1,2,3!", 1);
  TopologyProbeOptions o;
  o.runner = runner_process_testing::FakeRunnerPath();
  o.gpu = 1;
  absl::StatusOr<v1::RunnerTopology> t = ProbeTopology(o);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->device_count(), 4);
  ASSERT_EQ(t->links_size(), 3);
  EXPECT_EQ(t->links(0).peer_gpu_index(), 0);
  EXPECT_TRUE(t->links(0).peer_access());
  EXPECT_EQ(t->links(0).copy_gbps(), 100);
  EXPECT_EQ(t->links(1).peer_gpu_index(), 2);
  EXPECT_EQ(t->links(2).peer_gpu_index(), 3);
  EXPECT_FALSE(t->links(2).peer_access());
}

TEST_F(TopologyProbeTest, OneGpuHasNoLinks) {
  TopologyProbeOptions o;
  o.runner = runner_process_testing::FakeRunnerPath();
  absl::StatusOr<v1::RunnerTopology> t = ProbeTopology(o);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->links_size(), 0);
}

TEST_F(TopologyProbeTest, ARunnerThatFailsOrWritesJunkIsAnError) {
  TopologyProbeOptions o;
  o.runner = Script("exit 3");
  absl::StatusOr<v1::RunnerTopology> t = ProbeTopology(o);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(t.status().message(), HasSubstr("exited with status 3"));

  o.runner = Script("printf '\\377\\377\\377' > \"$2\"");
  t = ProbeTopology(o);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kDataLoss);

  o.runner = Script("head -c 70000 /dev/zero | tr '\\0' '\\010' > \"$2\"");
  t = ProbeTopology(o);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kDataLoss) << t.status();

  o.runner = Script("sleep 30");
  o.timeout = absl::Milliseconds(200);
  t = ProbeTopology(o);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(t.status().message(), HasSubstr("ran past its time limit"));

  o.runner = dir_.path() + "/no-such-runner";
  EXPECT_EQ(ProbeTopology(o).status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace kbench
