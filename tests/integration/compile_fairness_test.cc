// kbd's compile capacity under attack, over gRPC (no GPU needed): one
// session sends as many compile bombs as kbd has compile threads, and
// another session's compile still answers at once; the bomber's calls that
// gave up (deadline passed, cancelled) while queued are dropped, never
// compiled, so its next compile does not wait behind a backlog. Bounded:
// the bombs stop at a 4 s CPU limit, the whole test takes about 15 s.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "kbench/v1/kbench.grpc.pb.h"
#include "testing/process.h"

namespace kbench {
namespace {

using ::kbench::testing::KbdProcess;
using ::kbench::testing::ReadSourceFile;

const char kNaive[] = "kernels/examples/gather_linear_naive.cu";

// The naive example with `extra` after its first line (distinct sources
// are distinct compiles: nothing comes from the cache).
std::string Naive(const std::string& extra) {
  std::string s = ReadSourceFile(kNaive);
  const size_t eol = s.find('\n') + 1;
  return s.substr(0, eol) + extra + "\n" + s.substr(eol);
}

// Exponential template instantiation: stopped by the CPU limit.
std::string Bomb(int i) {
  return Naive(absl::StrCat(
      "// bomb ", i,
      "\ntemplate <int N, int M> struct B {\n"
      "  static constexpr int v = B<N - 1, 2 * M>::v + B<N - 1, 2 * M + "
      "1>::v;\n"
      "};\n"
      "template <int M> struct B<0, M> { static constexpr int v = 1; };\n"
      "__global__ void bomb(int* out) { *out = B<26, 0>::v; }"));
}

// One CompileKernel call on its own thread, cancellable.
class Call {
 public:
  Call(v1::Kbench::Stub* stub, const std::string& session,
       const std::string& source, absl::Duration deadline) {
    ctx_.set_deadline(
        std::chrono::system_clock::now() +
        std::chrono::milliseconds(absl::ToInt64Milliseconds(deadline)));
    request_.mutable_kernel()->set_source(source);
    request_.mutable_kernel()->set_filename("kernel.cu");
    request_.mutable_kernel()->set_session_id(session);
    start_ = absl::Now();
    thread_ = std::thread([this, stub] {
      status_ = stub->CompileKernel(&ctx_, request_, &response_);
      took_ = absl::Now() - start_;
    });
  }
  ~Call() {
    if (thread_.joinable()) {
      ctx_.TryCancel();
      thread_.join();
    }
  }
  void Cancel() { ctx_.TryCancel(); }
  const grpc::Status& Wait() {
    thread_.join();
    return status_;
  }
  absl::Duration took() const { return took_; }

 private:
  grpc::ClientContext ctx_;
  v1::CompileKernelRequest request_;
  v1::CompileKernelResponse response_;
  grpc::Status status_;
  absl::Time start_;
  absl::Duration took_;
  std::thread thread_;
};

// A value of kbd's /metrics, e.g. `kbench_compile_total{outcome="dropped"}`.
double Metric(httplib::Client& http, const std::string& series) {
  httplib::Result res = http.Get("/metrics");
  if (!res || res->status != 200) return -1;
  for (absl::string_view line : absl::StrSplit(res->body, '\n')) {
    if (absl::StartsWith(line, series + " ")) {
      double v = 0;
      if (absl::SimpleAtod(line.substr(series.size() + 1), &v)) return v;
    }
  }
  return -1;
}

TEST(CompileFairnessTest, BombsStallOnlyTheirSenderAndAbandonedCallsNeverRun) {
  KbdProcess::Options options;
  options.extra_args = {"--compile-threads=2", "--compile-cpu-limit-s=4"};
  auto kbd = KbdProcess::Start(options);
  ASSERT_TRUE(kbd.ok()) << kbd.status();
  auto channel = grpc::CreateChannel((*kbd)->address(),
                                     grpc::InsecureChannelCredentials());
  auto stub = v1::Kbench::NewStub(channel);
  const std::string& http_addr = (*kbd)->http_address();
  const size_t colon = http_addr.rfind(':');
  httplib::Client http(http_addr.substr(0, colon),
                       std::stoi(http_addr.substr(colon + 1)));
  const std::string running = "kbench_compile_queue{state=\"running\"}";
  const std::string queued = "kbench_compile_queue{state=\"queued\"}";

  // kbd compiled the problems' example kernels when it started.
  const double at_start =
      Metric(http, "kbench_compile_total{outcome=\"compiled\"}");
  auto wait_for = [&](double want_running, double want_queued) {
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while ((Metric(http, running) != want_running ||
            Metric(http, queued) != want_queued) &&
           absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(20));
    }
  };
  // As many bombs as compile threads, from one session: the first runs,
  // the second waits for the bomber's own slot.
  Call bomb_a(stub.get(), "bomber", Bomb(1), absl::Seconds(60));
  wait_for(1, 0);
  Call bomb_b(stub.get(), "bomber", Bomb(2), absl::Seconds(60));
  wait_for(1, 1);
  ASSERT_EQ(Metric(http, running), 1) << (*kbd)->Log();
  ASSERT_EQ(Metric(http, queued), 1);

  // Another session compiles at once on the other thread.
  Call victim(stub.get(), "victim", Naive("// victim"), absl::Seconds(30));
  const grpc::Status v = victim.Wait();
  ASSERT_TRUE(v.ok()) << v.error_message();
  EXPECT_LT(victim.took(), absl::Seconds(3))
      << "the victim's compile waited behind the bombs";

  // The bomber's impatient calls queue behind its bomb and give up.
  std::vector<std::unique_ptr<Call>> impatient;
  impatient.reserve(10);
  for (int i = 0; i < 10; ++i) {
    impatient.push_back(std::make_unique<Call>(
        stub.get(), "bomber", Naive(absl::StrCat("// impatient ", i)),
        absl::Milliseconds(200)));
  }
  for (auto& c : impatient) {
    EXPECT_EQ(c->Wait().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  }
  bomb_b.Cancel();
  EXPECT_EQ(bomb_b.Wait().error_code(), grpc::StatusCode::CANCELLED);

  const grpc::Status a = bomb_a.Wait();
  EXPECT_EQ(a.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << a.error_message();

  // No backlog: the bomber's next compile runs at once, and none of the
  // abandoned ones was compiled.
  Call next(stub.get(), "bomber", Naive("// next"), absl::Seconds(30));
  const grpc::Status n = next.Wait();
  ASSERT_TRUE(n.ok()) << n.error_message();
  EXPECT_LT(next.took(), absl::Seconds(3));
  EXPECT_EQ(Metric(http, "kbench_compile_total{outcome=\"dropped\"}"), 11)
      << (*kbd)->Log();
  // bomb 1, the victim's and the next compile.
  EXPECT_EQ(Metric(http, "kbench_compile_total{outcome=\"compiled\"}"),
            at_start + 3);
}

}  // namespace
}  // namespace kbench
