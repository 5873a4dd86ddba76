#include "client/kbench_client.h"

#include <chrono>
#include <utility>

#include "base/grpc/grpc_status.h"

namespace kbench {
namespace {

// Results (trial tables, logs) can exceed gRPC's 4 MiB default.
constexpr int kMaxReceiveBytes = 64 << 20;

std::chrono::system_clock::time_point ToChrono(absl::Time t) {
  return absl::ToChronoTime(t);
}

}  // namespace

KbenchClient::KbenchClient(std::string address, absl::Duration default_timeout)
    : address_(std::move(address)), default_timeout_(default_timeout) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxReceiveBytes);
  // Reconnect quickly after a server restart (the default backoff grows to
  // two minutes, far longer than a restart takes).
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 200);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  channel_ = grpc::CreateCustomChannel(
      address_, grpc::InsecureChannelCredentials(), args);
  stub_ = v1::Kbench::NewStub(channel_);
}

bool KbenchClient::Connected() const {
  return channel_->GetState(/*try_to_connect=*/false) == GRPC_CHANNEL_READY;
}

void KbenchClient::Prepare(const KbenchCallOptions& options,
                           grpc::ClientContext* context) const {
  const absl::Duration timeout = options.timeout > absl::ZeroDuration()
                                     ? options.timeout
                                     : default_timeout_;
  context->set_deadline(ToChrono(absl::Now() + timeout));
  context->set_wait_for_ready(options.wait_for_ready);
}

// Each unary method: prepare a context, call the stub, convert the status.
#define KBENCH_CLIENT_UNARY(Method)                                           \
  absl::StatusOr<v1::Method##Response> KbenchClient::Method(                  \
      const v1::Method##Request& request, const KbenchCallOptions& options) { \
    grpc::ClientContext context;                                              \
    Prepare(options, &context);                                               \
    v1::Method##Response response;                                            \
    grpc::Status status = stub_->Method(&context, request, &response);        \
    if (!status.ok()) return FromGrpcStatus(status);                          \
    return response;                                                          \
  }

KBENCH_CLIENT_UNARY(GetGpuSpecs)
KBENCH_CLIENT_UNARY(CompileKernel)
KBENCH_CLIENT_UNARY(RunCorrectness)
KBENCH_CLIENT_UNARY(ProfileKernel)
KBENCH_CLIENT_UNARY(SubmitKernel)
KBENCH_CLIENT_UNARY(SanitizeKernel)
KBENCH_CLIENT_UNARY(ListProblems)
KBENCH_CLIENT_UNARY(SubmitJob)
KBENCH_CLIENT_UNARY(GetJob)
KBENCH_CLIENT_UNARY(ListJobs)
KBENCH_CLIENT_UNARY(CancelJob)
KBENCH_CLIENT_UNARY(SubmitSweep)
KBENCH_CLIENT_UNARY(GetSweep)
KBENCH_CLIENT_UNARY(GetProblem)
KBENCH_CLIENT_UNARY(CompareRuns)
KBENCH_CLIENT_UNARY(CreateSession)
KBENCH_CLIENT_UNARY(GetSession)
KBENCH_CLIENT_UNARY(ListSessions)
KBENCH_CLIENT_UNARY(CloseSession)

#undef KBENCH_CLIENT_UNARY

absl::Status KbenchClient::WatchJob(
    const v1::WatchJobRequest& request, absl::Time deadline,
    const std::function<void(const v1::Job&)>& on_update) {
  grpc::ClientContext context;
  context.set_deadline(ToChrono(deadline));
  std::unique_ptr<grpc::ClientReader<v1::WatchJobResponse>> reader =
      stub_->WatchJob(&context, request);
  v1::WatchJobResponse response;
  while (reader->Read(&response)) on_update(response.job());
  return FromGrpcStatus(reader->Finish());
}

}  // namespace kbench
