// Launch plans of a problem that spans GPUs (docs/multi-gpu.md, step 4):
// `rank` and `world_size` in expressions, `peer(NAME, RANK)` in args(),
// resolved per rank; and each way of misusing them refused with the line
// and what to write instead.
#include <string>

#include "absl/status/statusor.h"
#include "contract/launch_plan.h"
#include "contract/parsed_plan.h"
#include "contract/problem_util.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "kbench/v1/problem.pb.h"

namespace kbench {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// allgather_fp32's shape as data, with a replicated weight `w` and a
// rank-0-only tensor `scale` for the refusals.
v1::Problem Ranked(int world_size = 2) {
  v1::Problem p;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(
        name: "ag"
        world_size: 2
        dims { name: "N" min: 1 max: 4096 }
        tensors {
          name: "x"
          role: TENSOR_ROLE_INPUT
          dtype: DTYPE_FP32
          shape: [ "N" ]
          placement: PLACEMENT_PER_RANK
        }
        tensors {
          name: "scale"
          role: TENSOR_ROLE_INPUT
          dtype: DTYPE_FP32
          shape: [ "1" ]
          placement: PLACEMENT_RANK0
        }
        tensors {
          name: "out"
          role: TENSOR_ROLE_OUTPUT
          dtype: DTYPE_FP32
          shape: [ "2*N" ]
          placement: PLACEMENT_REPLICATED
        }
        signature: [ "x", "scale", "out", "N" ]
      )pb",
      &p));
  p.set_world_size(world_size);
  return p;
}

absl::StatusOr<ConcretePlan> ResolveAt(const std::string& source,
                                       const v1::Problem& problem,
                                       const DimValues& dims) {
  absl::StatusOr<v1::LaunchPlan> plan = ParseLaunchPlan(source);
  if (!plan.ok()) return plan.status();
  absl::StatusOr<ParsedPlan> parsed = ParsedPlan::Create(*plan, problem);
  if (!parsed.ok()) return parsed.status();
  return parsed->Resolve(dims);
}

std::string Refusal(const std::string& source, const v1::Problem& problem,
                    const DimValues& dims = RankDims({{"N", 8}}, 0, 2)) {
  absl::StatusOr<ConcretePlan> resolved = ResolveAt(source, problem, dims);
  EXPECT_FALSE(resolved.ok());
  return std::string(resolved.status().message());
}

constexpr char kRing[] =
    "// @kb workspace flag bytes(4)\n"
    "// @kb launch ag grid(cdiv(N, 256), world_size) block(256) "
    "args(x, peer(x, (rank + 1) % world_size), out, peer(out, rank), "
    "peer(flag, world_size - 1 - rank), N, rank)\n";

TEST(PeerPlanTest, EachRankResolvesItsOwnPeersAndDims) {
  const v1::Problem problem = Ranked();
  for (int rank = 0; rank < 2; ++rank) {
    absl::StatusOr<ConcretePlan> plan =
        ResolveAt(kRing, problem, RankDims({{"N", 1000}}, rank, 2));
    ASSERT_TRUE(plan.ok()) << plan.status();
    const ConcreteLaunch& l = plan->launches[0];
    EXPECT_THAT(l.args,
                ElementsAre("x", "x", "out", "out", "flag", "N", "rank"));
    EXPECT_THAT(l.arg_peers,
                ElementsAre(-1, (rank + 1) % 2, -1, rank, 1 - rank, -1, -1));
    EXPECT_EQ(l.grid[0], 4);
    EXPECT_EQ(l.grid[1], 2);
  }
}

TEST(PeerPlanTest, TheParsedPlanKeepsThePeerAsWritten) {
  absl::StatusOr<v1::LaunchPlan> plan = ParseLaunchPlan(
      "// @kb launch ag grid(1) block(1) args(peer( x ,rank+1 ), out, N)\n");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(plan->launches(0).args(),
              ElementsAre("peer(x, rank+1)", "out", "N"));
}

TEST(PeerPlanTest, ADefaultArgumentListNamesNoPeer) {
  absl::StatusOr<ConcretePlan> plan =
      ResolveAt("// @kb launch ag grid(N) block(rank + 1)\n", Ranked(),
                RankDims({{"N", 4}}, 1, 2));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(plan->launches[0].args, ElementsAre("x", "scale", "out", "N"));
  EXPECT_THAT(plan->launches[0].arg_peers, ElementsAre(-1, -1, -1, -1));
  EXPECT_EQ(plan->launches[0].block[0], 2);
}

TEST(PeerPlanTest, ARankOutsideTheWorldIsRefusedAtThatRank) {
  const std::string source =
      "// @kb launch ag grid(1) block(1) args(peer(x, rank + 1), out, N)\n";
  // Rank 0 names rank 1, which exists; rank 1 names rank 2, which does not.
  EXPECT_TRUE(ResolveAt(source, Ranked(), RankDims({{"N", 4}}, 0, 2)).ok());
  const std::string why = Refusal(source, Ranked(), RankDims({{"N", 4}}, 1, 2));
  EXPECT_THAT(why, HasSubstr("line 1"));
  EXPECT_THAT(why, HasSubstr("is 2 at N=4 rank=1 world_size=2"));
  EXPECT_THAT(why, HasSubstr("% world_size"));
  EXPECT_THAT(Refusal("// @kb launch ag grid(1) block(1) "
                      "args(peer(x, rank - 1), out, N)\n",
                      Ranked()),
              HasSubstr("is -1"));
}

TEST(PeerPlanTest, MisusesAreRefusedWithWhatToWrite) {
  const v1::Problem ranked = Ranked();
  // A one-GPU problem has neither peers nor ranks.
  v1::Problem single = Ranked(0);
  for (v1::TensorSpec& t : *single.mutable_tensors()) t.clear_placement();
  EXPECT_THAT(Refusal("// @kb launch ag grid(1) block(1) "
                      "args(peer(x, 0), out, N)\n",
                      single, {{"N", 8}}),
              HasSubstr("runs on one GPU, so there is no peer to name"));
  EXPECT_THAT(
      Refusal("// @kb launch ag grid(rank + 1) block(1)\n", single, {{"N", 8}}),
      HasSubstr("is for problems that span GPUs"));
  // Only what every rank holds has a peer's copy.
  EXPECT_THAT(Refusal("// @kb launch ag grid(1) block(1) "
                      "args(x, peer(scale, 1), out, N)\n",
                      ranked),
              HasSubstr("lives on rank 0 only"));
  EXPECT_THAT(Refusal("// @kb launch ag grid(1) block(1) "
                      "args(x, peer(N, 1), out, N)\n",
                      ranked),
              HasSubstr("not a tensor or workspace"));
  // The rank is an expression over the dims, rank and world_size only.
  EXPECT_THAT(Refusal("// @kb launch ag grid(1) block(1) "
                      "args(peer(x, M), out, N)\n",
                      ranked),
              HasSubstr("the dims N, rank and world_size"));
  EXPECT_THAT(Refusal("// @kb launch ag grid(1) block(1) "
                      "args(peer(x, (1), out, N)\n",
                      ranked),
              HasSubstr("line 1"));
  EXPECT_THAT(
      Refusal("// @kb launch ag grid(1) block(1) args(peer(x), out, N)\n",
              ranked),
      HasSubstr("names no rank; write peer(NAME, RANK)"));
  EXPECT_THAT(
      Refusal("// @kb launch ag grid(1) block(1) args(peer(x,), out, N)\n",
              ranked),
      HasSubstr("is malformed"));
  EXPECT_THAT(Refusal("// @kb launch ag grid(1) block(1) args(x + 1, out, N)\n",
                      ranked),
              HasSubstr("or peer(NAME, RANK)"));
}

TEST(PeerPlanTest, RankDimsAddsTheRankAndTheWorld) {
  EXPECT_EQ(RankDims({{"N", 3}}, 1, 4),
            (DimValues{{"N", 3}, {"rank", 1}, {"world_size", 4}}));
  EXPECT_TRUE(SpansGpus(Ranked()));
  EXPECT_FALSE(SpansGpus(Ranked(1)));
}

TEST(PeerPlanTest, TheGatheredProblemHoldsEveryShard) {
  const v1::Problem gathered = GatheredProblem(Ranked());
  EXPECT_EQ(gathered.world_size(), 0);
  EXPECT_THAT(gathered.tensors(0).shape(), ElementsAre("2", "N"));
  EXPECT_THAT(gathered.tensors(1).shape(), ElementsAre("1"));
  EXPECT_THAT(gathered.tensors(2).shape(), ElementsAre("2*N"));
  for (const v1::TensorSpec& t : gathered.tensors()) {
    EXPECT_EQ(t.placement(), v1::PLACEMENT_UNSPECIFIED) << t.name();
  }
  // A one-GPU problem is its own gathered form.
  v1::Problem single = Ranked(0);
  EXPECT_EQ(GatheredProblem(single).SerializeAsString(),
            single.SerializeAsString());
}

}  // namespace
}  // namespace kbench
