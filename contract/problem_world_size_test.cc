// The problem format for problems that span GPUs (docs/multi-gpu.md, step
// 3): tests/integration/problems/allgather_fp32 (world_size 2, per-rank and
// replicated tensors, an NCCL all-gather step) loads beside the shipped
// problems, and each way of getting the new fields wrong is refused at load
// with the file and a message saying what to write.
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_replace.h"
#include "contract/contract_text.h"
#include "contract/problem_registry.h"
#include "contract/registry_fixtures.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kbench {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::kRowMean;
using testing::ReadText;
using testing::RefusedError;
using testing::TempTree;
using testing::WriteText;

const fs::path kAllGather =
    fs::path(KBENCH_SOURCE_DIR) / "tests/integration/problems/allgather_fp32";

using Edits = std::vector<std::pair<std::string, std::string>>;

// Copies `folder` (as `name`) beside the shipped problems, applies `edits`
// (from -> to) to its problem file and, when given, `baseline_edits` to its
// baseline.cu.
void AddProblem(const TempTree& tree, const fs::path& folder,
                const std::string& name, const Edits& edits,
                const Edits& baseline_edits = {}) {
  const fs::path to = tree.problems() / name;
  fs::copy(folder, to);
  for (const auto& [file, list] :
       {std::pair<std::string, const Edits*>{"problem.textproto", &edits},
        {"baseline.cu", &baseline_edits}}) {
    if (list->empty()) continue;
    std::string text = ReadText(to / file);
    for (const auto& [from, with] : *list) {
      EXPECT_NE(text.find(from), std::string::npos) << from;
      text = absl::StrReplaceAll(text, {{from, with}});
    }
    WriteText(to / file, text);
  }
}

// Why allgather_fp32, edited, is refused.
std::string AllGatherRefusal(const Edits& edits,
                             const Edits& baseline_edits = {}) {
  TempTree tree;
  tree.CopyShipped();
  AddProblem(tree, kAllGather, "allgather_fp32", edits, baseline_edits);
  return RefusedError(tree.problems(), "allgather_fp32/problem.textproto");
}

TEST(ProblemWorldSizeTest, AProblemThatSpansGpusLoadsAndSaysSo) {
  TempTree tree;
  tree.CopyShipped();
  AddProblem(tree, kAllGather, "allgather_fp32", {});
  absl::StatusOr<std::unique_ptr<ProblemRegistry>> registry =
      ProblemRegistry::LoadDir(tree.problems().string(), {});
  ASSERT_TRUE(registry.ok()) << registry.status();
  EXPECT_TRUE((*registry)->refused().empty())
      << (*registry)->refused()[0].error;
  absl::StatusOr<const v1::Problem*> p = (*registry)->Find("allgather_fp32");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ((*p)->world_size(), 2);
  EXPECT_EQ((*p)->tensors(0).placement(), v1::PLACEMENT_PER_RANK);
  EXPECT_EQ((*p)->baseline().steps(0).nccl().all_gather().recv(), "gathered");
  const std::string contract = KernelContractText(**p);
  EXPECT_THAT(contract, HasSubstr("x (N) fp32, shard r on GPU r;"));
  EXPECT_THAT(contract, HasSubstr("Spans 2 GPUs of one host"));
  EXPECT_THAT(contract, HasSubstr("peer(NAME, R)"));
  EXPECT_THAT(contract, HasSubstr("submit also times every rank"));
  EXPECT_THAT(contract, HasSubstr("counters of rank 0's kernels"));
}

TEST(ProblemWorldSizeTest, WorldSizeOutOfRangeIsRefused) {
  for (const char* bad : {"world_size: 9", "world_size: -1"}) {
    EXPECT_THAT(AllGatherRefusal({{"world_size: 2", bad}}),
                HasSubstr("world_size: "))
        << bad;
  }
  EXPECT_THAT(AllGatherRefusal({{"world_size: 2", "world_size: 9"}}),
              HasSubstr("or 2 to 8 for the GPUs of one host"));
}

TEST(ProblemWorldSizeTest, EveryTensorOfAProblemThatSpansGpusIsPlaced) {
  EXPECT_THAT(
      AllGatherRefusal({{" placement: PLACEMENT_REPLICATED", ""}}),
      HasSubstr("tensors[1] (out).placement: the problem spans 2 GPUs, so "
                "each tensor says where it lives"));
  EXPECT_THAT(
      AllGatherRefusal({{"PLACEMENT_REPLICATED", "PLACEMENT_PER_RANK"}}),
      HasSubstr("PLACEMENT_PER_RANK is for inputs"));
}

TEST(ProblemWorldSizeTest, APlacementOrCollectiveOnOneGpuIsRefused) {
  // The problem spans one GPU: its placements and its NCCL step mean
  // nothing there.
  EXPECT_THAT(AllGatherRefusal({{"world_size: 2", "world_size: 1"}}),
              HasSubstr("placement is only for a problem that spans GPUs"));
  TempTree tree;
  tree.CopyShipped();
  AddProblem(tree, kRowMean, "row_mean_fp32",
             {{"steps { launch: \"row_mean\" }",
               "steps { nccl { all_gather { send: \"x\" recv: \"g\" } } }\n"
               "  steps { launch: \"row_mean\" }"}});
  EXPECT_THAT(RefusedError(tree.problems(), "row_mean_fp32/problem.textproto"),
              HasSubstr("an nccl step needs a problem that spans GPUs"));
}

TEST(ProblemWorldSizeTest, TheAllGatherNamesAShardAndAWorkspace) {
  EXPECT_THAT(AllGatherRefusal({{"send: \"x\"", "send: \"out\""}}),
              HasSubstr("send 'out' is not an input with PLACEMENT_PER_RANK"));
  EXPECT_THAT(AllGatherRefusal({{"recv: \"gathered\"", "recv: \"out\""}}),
              HasSubstr("recv 'out' must name a workspace"));
  // A name that is no workspace of the baseline's file.
  EXPECT_THAT(
      AllGatherRefusal({}, {{"@kb workspace gathered", "@kb workspace other"},
                            {"args(gathered,", "args(other,"}}),
      HasSubstr("recv 'gathered' is not a `// @kb workspace`"));
  EXPECT_THAT(AllGatherRefusal({{"nccl { all_gather { send: \"x\" recv: "
                                 "\"gathered\" } }",
                                 "nccl { }"}}),
              HasSubstr("nccl needs an op"));
}

TEST(ProblemWorldSizeTest, RankAndWorldSizeAreReservedNames) {
  EXPECT_THAT(AllGatherRefusal({{"dims { name: \"N\"", "dims { name: \"rank\""},
                                {"shape: [\"N\"]", "shape: [\"rank\"]"},
                                {"shape: [\"2*N\"]", "shape: [\"2*rank\"]"},
                                {"\"out\", \"N\"]", "\"out\", \"rank\"]"}}),
              HasSubstr("'rank' is a reserved name"));
}

TEST(ProblemWorldSizeTest, ACheckCaseGivesEveryShardOfAPerRankInput) {
  // Two values: one shard's worth, not the gathered tensor's four.
  EXPECT_THAT(
      AllGatherRefusal({{"values: [1, 2, 3, 4] }\n  outputs",
                         "values: [1, 2] }\n  outputs"}}),
      HasSubstr("'x' has 2 values; at these dims it has 4 elements (2 shards "
                "of 2)"));
}

}  // namespace
}  // namespace kbench
