// The baseline of the compiler red-team suite (see README.md): every attack
// file is in the list and says what it tries; the attacks are live without
// the defences (NVRTC called directly, unjailed, in this process, reads
// their files, and the detector sees it); and the headers
// docs/kernel-contract.md promises compile, in the sandbox and through kbd.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <nvrtc.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/sandbox/compile_sandbox.h"
#include "kbench/v1/kbench.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "testing/process.h"
#include "tests/adversarial/compile/leak_cases.h"

namespace kbench::compile_leak {
namespace {

using ::kbench::testing::KbdProcess;
using nlohmann::json;

TEST(CompileLeakSuiteTest, EveryAttackFileIsRun) {
  std::vector<std::string> files, listed;
  for (const fs::directory_entry& e :
       fs::directory_iterator(SourceDir() + "/tests/adversarial/compile")) {
    if (e.path().extension() == ".cu") {
      files.push_back(e.path().stem().string());
    }
  }
  for (const Attack& a : Attacks()) {
    listed.push_back(a.name);
    EXPECT_EQ(ReadSourceFile(
                  absl::StrCat("tests/adversarial/compile/", a.name, ".cu"))
                  .rfind("// Attack: ", 0),
              0u)
        << a.name << ".cu must start with a comment saying what it tries";
  }
  std::sort(files.begin(), files.end());
  std::sort(listed.begin(), listed.end());
  EXPECT_EQ(files, listed);
  EXPECT_GE(listed.size(), 20u);
}

// ---------------------------------------------------------------------------
// Without the policy and the jail (NVRTC called directly, in this process),
// most attacks do read their file, and the detector sees it: the vectors are
// live primitives, so their passing above is the defences' doing. Skipped:
// those that block on a pipe here, the flood (slow) and the 64 KiB name.

std::string RawNvrtcLog(const std::string& source, const std::string& name) {
  const std::vector<std::string> options = NvrtcCompiler().OptionsFor("sm_90");
  std::vector<const char*> ptrs;
  ptrs.reserve(options.size());
  for (const std::string& o : options) ptrs.push_back(o.c_str());
  nvrtcProgram p = nullptr;
  if (nvrtcCreateProgram(&p, source.c_str(), name.c_str(), 0, nullptr,
                         nullptr) != NVRTC_SUCCESS) {
    return "";
  }
  nvrtcCompileProgram(p, static_cast<int>(ptrs.size()), ptrs.data());
  size_t size = 0;
  nvrtcGetProgramLogSize(p, &size);
  std::string log(size, '\0');
  nvrtcGetProgramLog(p, log.data());
  nvrtcDestroyProgram(&p);
  return log;
}

TEST(RawNvrtcTest, TheAttacksAreLiveWithoutTheDefences) {
  std::vector<std::string> live, dead;
  for (const Attack& a : Attacks()) {
    if (a.name == "proc_self_fd0" || a.name == "proc_self_fd2" ||
        a.name == "dev_stdin" || a.name == "error_flood" ||
        a.name == "long_file_name") {
      continue;
    }
    TempDir data;
    std::vector<Secret> secrets = Env().secrets;
    Env().FakeDataDir(data.path() + "/data", &secrets);
    const std::string log =
        RawNvrtcLog(AttackSource(a, data.path() + "/data"), AttackFilename(a));
    const std::vector<std::string> leaks = Leaks(log, secrets, false);
    if (leaks.empty()) {
      dead.push_back(a.name);
    } else {
      live.push_back(a.name);
      std::cout << "[ raw nvrtc ] " << a.name << ": " << leaks[0] << std::endl;
    }
  }
  std::cout << "[ raw nvrtc ] leak: " << absl::StrJoin(live, " ")
            << "\n[ raw nvrtc ] no leak: " << absl::StrJoin(dead, " ")
            << std::endl;
  EXPECT_GE(live.size(), 20u);
  for (const char* must :
       {"digraph_include_environ", "digraph_include_canary", "macro_include",
        "problem_file_static_assert", "worker_token", "data_dir_db",
        "cccl_thrust_host_system", "line_forging", "proc_self_cmdline_maps",
        "traversal_subdir", "cccl_thrust_environ", "cccl_thrust_problem_file",
        "cccl_thrust_worker_token", "holdout_secret", "has_include_probe",
        "spaced_include"}) {
    EXPECT_NE(std::find(live.begin(), live.end(), must), live.end())
        << must << " no longer reads its file even without the defences: "
        << "fix the attack or the detector";
  }
}

// ---------------------------------------------------------------------------
// The headers the kernel contract promises compile, in the sandbox and in
// kbd.

std::vector<std::string> PromisedHeaders() {
  return {"cuda/std/cstdint",     "cuda/std/type_traits",
          "cuda/barrier",         "cuda_fp16.h",
          "cuda_bf16.h",          "cuda_fp8.h",
          "cooperative_groups.h", "mma.h",
          "cuda_pipeline.h"};
}

std::string WithHeader(const std::string& header) {
  return absl::StrCat("#include <", header, ">\n", FreshValidKernel(header));
}

std::string HeaderName(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = info.param;
  for (char& c : n) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return n;
}

class PromisedHeaderTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PromisedHeaderTest, CompilesInTheSandbox) {
  CompileSandbox sandbox(SandboxOptions());
  ASSERT_TRUE(sandbox.Start().ok());
  const absl::StatusOr<CompileOutput> out =
      sandbox.Compile(WithHeader(GetParam()), "kernel.cu", "sm_90");
  ASSERT_TRUE(out.ok()) << "<" << GetParam() << ">: " << out.status();
  EXPECT_TRUE(out->report.success())
      << "<" << GetParam()
      << "> does not compile: " << out->report.log().substr(0, 2000);
}

INSTANTIATE_TEST_SUITE_P(Contract, PromisedHeaderTest,
                         ::testing::ValuesIn(PromisedHeaders()), HeaderName);

TEST(PromisedHeadersKbdTest, CompileOverGrpcAndHttp) {
  auto kbd = KbdProcess::Start({{"--compile-cpu-limit-s=30"}, ""});
  ASSERT_TRUE(kbd.ok()) << kbd.status();
  auto stub = v1::Kbench::NewStub(grpc::CreateChannel(
      (*kbd)->address(), grpc::InsecureChannelCredentials()));
  const std::string& addr = (*kbd)->http_address();
  int port = 0;
  ASSERT_TRUE(absl::SimpleAtoi(addr.substr(addr.rfind(':') + 1), &port));
  httplib::Client http("127.0.0.1", port);
  http.set_read_timeout(120);
  for (const std::string& h : PromisedHeaders()) {
    v1::CompileKernelRequest req;
    req.mutable_kernel()->set_source(WithHeader(h));
    v1::CompileKernelResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(120));
    const grpc::Status s = stub->CompileKernel(&ctx, req, &resp);
    EXPECT_TRUE(s.ok() && resp.compile().success())
        << "<" << h << "> over gRPC: " << s.error_message().substr(0, 1000)
        << resp.compile().log().substr(0, 1000);
    httplib::Result r = http.Post("/v1/tools/compile_kernel",
                                  json({{"kernel_code", WithHeader(h)}}).dump(),
                                  "application/json");
    ASSERT_TRUE(r) << "<" << h << "> over HTTP: no reply";
    const json body = json::parse(r->body, nullptr, false);
    EXPECT_TRUE(r->status == 200 && !body.is_discarded() &&
                !body.value("isError", true))
        << "<" << h << "> over HTTP: " << r->status << " "
        << r->body.substr(0, 1000);
  }
}

}  // namespace
}  // namespace kbench::compile_leak
