// The text of GPU specs (kbctl specs) and of a problem (kbctl problem).
#include <string>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "report/report_text.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

TEST(ReportTextSpecsTest, GpuSpecs) {
  EXPECT_THAT(FormatGpuSpecs(v1::GetGpuSpecsResponse()),
              StartsWith("no GPU worker is connected"));
  v1::GetGpuSpecsResponse specs;
  v1::WorkerGpu* w = specs.add_gpus();
  w->set_worker_id("w-1");
  w->set_hostname("gpu-host");
  w->set_busy(true);
  w->set_current_job_id("j-9");
  w->set_jobs_done(12);
  v1::GpuSpec* g = w->mutable_spec();
  g->set_name("NVIDIA H200");
  g->set_arch("sm_90");
  g->set_cc_major(9);
  g->set_sm_count(132);
  g->set_sm_clock_mhz(1980);
  g->set_memory_clock_mhz(2619);
  g->set_memory_bus_bits(5120);
  g->set_memory_bytes(150011707392);
  g->set_l2_bytes(50LL << 20);
  g->set_smem_per_block_bytes(48 << 10);
  g->set_smem_per_block_optin_bytes(227 << 10);
  g->set_smem_per_sm_bytes(228 << 10);
  g->set_reserved_smem_per_block_bytes(1 << 10);
  g->set_regs_per_sm(65536);
  g->set_regs_per_block(65536);
  g->set_max_threads_per_block(1024);
  g->set_max_threads_per_sm(2048);
  g->set_max_blocks_per_sm(32);
  g->set_warp_size(32);
  g->set_theoretical_memory_gbps(4800);
  const std::string text = FormatGpuSpecs(specs);
  EXPECT_THAT(text, StartsWith("GPU 0: NVIDIA H200 on gpu-host (worker w-1) "
                               "— busy with job j-9, 12 jobs done\n"));
  EXPECT_THAT(text, HasSubstr("arch: sm_90 (compute capability 9.0), 132 SMs, "
                              "SM clock 1980 MHz"));
  EXPECT_THAT(text, HasSubstr("memory: 139.7 GiB, 4800 GB/s theoretical "
                              "(5120-bit bus, 2619 MHz); L2 50 MiB"));
  EXPECT_THAT(text, HasSubstr("shared memory: 48 KiB per block, 227 KiB per "
                              "block with opt-in, 228 KiB per SM, 1 KiB "
                              "reserved per block"));
  EXPECT_THAT(text, HasSubstr("registers: 65536 per SM, 65536 per block"));
  EXPECT_THAT(text, HasSubstr("threads: 1024 per block, 2048 per SM"));
  // The host id, where the worker reports one, tells hosts apart.
  specs.mutable_gpus(0)->set_host_id("h-0a1b");
  EXPECT_THAT(FormatGpuSpecs(specs),
              StartsWith("GPU 0: NVIDIA H200 on gpu-host (worker w-1, host "
                         "h-0a1b) — busy"));
  // No links: one GPU on its host, or none measured; no line.
  EXPECT_THAT(FormatGpuSpecs(specs), Not(HasSubstr("links:")));
  v1::GpuLink* nvlink = specs.mutable_gpus(0)->add_links();
  nvlink->set_peer_gpu_index(1);
  nvlink->set_peer_access(true);
  nvlink->set_performance_rank(1);
  nvlink->set_copy_gbps(361.4);
  specs.mutable_gpus(0)->add_links()->set_peer_gpu_index(2);
  EXPECT_THAT(FormatGpuSpecs(specs),
              HasSubstr("\n  links: GPU 1 (peer access, rank 1, 361 GB/s), "
                        "GPU 2 (no peer access)\n"));
}

v1::Problem GatherLinearProblem() {
  v1::Problem p;
  p.set_name("gather_linear_fp32");
  p.set_title("Virtual all-gather then linear (fp32)");
  p.set_statement("x holds R shards of shape (B, H).");
  p.set_reference_pseudocode("for b in [0, B): ...");
  p.set_entry_point("gather_linear");
  for (const char* name : {"R", "B", "H", "K"}) {
    v1::DimSpec* d = p.add_dims();
    d->set_name(name);
    d->set_min(1);
    d->set_max(name[0] == 'R' ? 64 : 65536);
  }
  p.mutable_dims(0)->set_description("number of shards (ranks)");
  p.mutable_dims(1)->set_multiple_of(8);
  v1::TensorSpec* x = p.add_tensors();
  x->set_name("x");
  x->set_role(v1::TENSOR_ROLE_INPUT);
  x->set_dtype(v1::DTYPE_FP32);
  for (const char* e : {"R", "B", "H"}) x->add_shape(e);
  v1::TensorSpec* out = p.add_tensors();
  out->set_name("out");
  out->set_role(v1::TENSOR_ROLE_OUTPUT);
  out->set_dtype(v1::DTYPE_FP32);
  for (const char* e : {"B", "K"}) out->add_shape(e);
  for (const char* s : {"x", "out", "R", "B", "H", "K"}) p.add_signature(s);
  v1::ShapeSet* odd = p.add_shape_sets();
  odd->set_name("odd");
  odd->set_description("sizes that are multiples of no tile");
  v1::Shape* b7 = odd->add_shapes();
  b7->set_name("b7");
  (*b7->mutable_dims())["K"] = 56;
  (*b7->mutable_dims())["R"] = 4;
  (*b7->mutable_dims())["H"] = 32;
  (*b7->mutable_dims())["B"] = 7;
  p.set_default_shape_set("odd");
  p.add_check_shape_sets("odd");
  p.mutable_tolerance()->set_atol(1e-3);
  p.mutable_tolerance()->set_rtol(1e-3);
  p.mutable_tolerance()->set_max_rel_norm(1e-5);
  p.set_trials(5);
  p.set_time_budget_ms(10000);
  p.set_flops("2*B*K*R*H");
  return p;
}

TEST(ReportTextSpecsTest, Problem) {
  const std::string text = FormatProblem(GatherLinearProblem(), false);
  EXPECT_THAT(text, StartsWith("gather_linear_fp32: Virtual all-gather then "
                               "linear (fp32)\n"));
  EXPECT_THAT(text, HasSubstr("  R in [1, 64] — number of shards (ranks)\n"));
  EXPECT_THAT(text, HasSubstr("  B in [1, 65536], multiple of 8\n"));
  EXPECT_THAT(text, HasSubstr("  x: input fp32 [R, B, H]\n"));
  EXPECT_THAT(text, HasSubstr("  out: output fp32 [B, K]\n"));
  EXPECT_THAT(text, HasSubstr("entry point:\n  "));
  EXPECT_THAT(text, HasSubstr("gather_linear("));
  EXPECT_THAT(text, HasSubstr("  odd: sizes that are multiples of no tile\n"
                              "    b7: R=4 B=7 H=32 K=56\n"));
  EXPECT_THAT(text, HasSubstr("tolerance: |out - ref| <= 0.001 + 0.001 * "
                              "|ref| per element, rel-norm <= 1e-05\n"));
  EXPECT_THAT(text, HasSubstr("trials per shape: 5; time budget: 10.0 s per "
                              "job; FLOPs: 2*B*K*R*H\n"));
  EXPECT_THAT(text, Not(HasSubstr("x holds R shards")));
  const std::string verbose = FormatProblem(GatherLinearProblem(), true);
  EXPECT_THAT(verbose, HasSubstr("statement:\n  x holds R shards"));
  EXPECT_THAT(verbose, HasSubstr("reference:\n  for b in [0, B): ...\n"));
}

TEST(ReportTextSpecsTest, ShowsMeasuredCeilingsBesideTheDatasheet) {
  v1::GetGpuSpecsResponse r;
  v1::GpuSpec* g = r.add_gpus()->mutable_spec();
  g->set_name("NVIDIA H200");
  g->set_measured_copy_gbps(4182.8);
  g->set_measured_fp32_tflops(59.67);
  g->set_datasheet_name("H200 SXM datasheet");
  g->set_datasheet_memory_gbps(4800);
  g->set_datasheet_fp32_tflops(67);
  const std::string text = FormatGpuSpecs(r);
  EXPECT_NE(text.find("measured: 4183 GB/s device copy (read + write), 59.7 "
                      "TFLOP/s FP32 FMA"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("datasheet values (H200 SXM datasheet): 4800 GB/s "
                      "memory, 67 TFLOP/s FP32"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace kbench
