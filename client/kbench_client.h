// KbenchClient: a thin synchronous client of the kbench.v1.Kbench gRPC
// service. Every method returns the response or the call's status converted
// to absl::Status with the same code and message.
//
// Ownership: owns its channel and stub. Thread safety: the methods may be
// called concurrently (gRPC stubs are thread-safe).
#ifndef KBENCH_CLIENT_KBENCH_CLIENT_H_
#define KBENCH_CLIENT_KBENCH_CLIENT_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/grpc/grpc_status.h"  // FromGrpcStatus, for callers.
#include "grpcpp/grpcpp.h"
#include "kbench/v1/kbench.grpc.pb.h"
#include "kbench/v1/kbench.pb.h"

namespace kbench {

// Per-call settings; the defaults use the client's default timeout.
struct KbenchCallOptions {
  // Deadline of the call, counted from its start; zero or negative means
  // the client's default timeout.
  absl::Duration timeout = absl::ZeroDuration();
  // Wait for the channel to connect (up to the deadline) instead of failing
  // at once with UNAVAILABLE while the server is down; for polling across a
  // server restart.
  bool wait_for_ready = false;
};

class KbenchClient {
 public:
  // Connects lazily to `address` ("host:port", insecure). `default_timeout`
  // bounds every call that names no timeout of its own.
  KbenchClient(std::string address, absl::Duration default_timeout);

  KbenchClient(const KbenchClient&) = delete;
  KbenchClient& operator=(const KbenchClient&) = delete;

  const std::string& address() const { return address_; }

  // True when the channel is connected; false while it connects or after
  // it failed to. Tells "the server is unreachable" apart from UNAVAILABLE
  // answered by a running server.
  bool Connected() const;

  // Agent tools (each waits for its result).
  absl::StatusOr<v1::GetGpuSpecsResponse> GetGpuSpecs(
      const v1::GetGpuSpecsRequest& request,
      const KbenchCallOptions& options = KbenchCallOptions());
  absl::StatusOr<v1::CompileKernelResponse> CompileKernel(
      const v1::CompileKernelRequest& request,
      const KbenchCallOptions& options = KbenchCallOptions());
  absl::StatusOr<v1::RunCorrectnessResponse> RunCorrectness(
      const v1::RunCorrectnessRequest& request,
      const KbenchCallOptions& options = KbenchCallOptions());
  absl::StatusOr<v1::ProfileKernelResponse> ProfileKernel(
      const v1::ProfileKernelRequest& request,
      const KbenchCallOptions& options = KbenchCallOptions());
  absl::StatusOr<v1::SubmitKernelResponse> SubmitKernel(
      const v1::SubmitKernelRequest& request,
      const KbenchCallOptions& options = KbenchCallOptions());
  absl::StatusOr<v1::SanitizeKernelResponse> SanitizeKernel(
      const v1::SanitizeKernelRequest& request,
      const KbenchCallOptions& options = KbenchCallOptions());
  absl::StatusOr<v1::ListProblemsResponse> ListProblems(
      const v1::ListProblemsRequest& request,
      const KbenchCallOptions& options = KbenchCallOptions());

  // Jobs.
  absl::StatusOr<v1::SubmitJobResponse> SubmitJob(
      const v1::SubmitJobRequest& request,
      const KbenchCallOptions& options = KbenchCallOptions());
  absl::StatusOr<v1::GetJobResponse> GetJob(
      const v1::GetJobRequest& request,
      const KbenchCallOptions& options = KbenchCallOptions());
  absl::StatusOr<v1::ListJobsResponse> ListJobs(
      const v1::ListJobsRequest& request,
      const KbenchCallOptions& options = KbenchCallOptions());
  absl::StatusOr<v1::CancelJobResponse> CancelJob(
      const v1::CancelJobRequest& request,
      const KbenchCallOptions& options = KbenchCallOptions());
  absl::StatusOr<v1::SubmitSweepResponse> SubmitSweep(
      const v1::SubmitSweepRequest& request,
      const KbenchCallOptions& options = KbenchCallOptions());
  absl::StatusOr<v1::GetSweepResponse> GetSweep(
      const v1::GetSweepRequest& request,
      const KbenchCallOptions& options = KbenchCallOptions());

  // Problems, comparisons and sessions.
  absl::StatusOr<v1::GetProblemResponse> GetProblem(
      const v1::GetProblemRequest& request,
      const KbenchCallOptions& options = KbenchCallOptions());
  absl::StatusOr<v1::CompareRunsResponse> CompareRuns(
      const v1::CompareRunsRequest& request,
      const KbenchCallOptions& options = KbenchCallOptions());
  absl::StatusOr<v1::CreateSessionResponse> CreateSession(
      const v1::CreateSessionRequest& request,
      const KbenchCallOptions& options = KbenchCallOptions());
  absl::StatusOr<v1::GetSessionResponse> GetSession(
      const v1::GetSessionRequest& request,
      const KbenchCallOptions& options = KbenchCallOptions());
  absl::StatusOr<v1::ListSessionsResponse> ListSessions(
      const v1::ListSessionsRequest& request,
      const KbenchCallOptions& options = KbenchCallOptions());
  absl::StatusOr<v1::CloseSessionResponse> CloseSession(
      const v1::CloseSessionRequest& request,
      const KbenchCallOptions& options = KbenchCallOptions());

  // Streams the job's updates to `on_update` (called on this thread) until
  // the server ends the stream or `deadline` passes; returns the stream's
  // final status (OK after the DONE update, DEADLINE_EXCEEDED when the
  // deadline passed).
  absl::Status WatchJob(const v1::WatchJobRequest& request, absl::Time deadline,
                        const std::function<void(const v1::Job&)>& on_update);

 private:
  // Sets the deadline and wait-for-ready of `context` from `options`.
  void Prepare(const KbenchCallOptions& options,
               grpc::ClientContext* context) const;

  std::string address_;
  absl::Duration default_timeout_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Kbench::Stub> stub_;
};

}  // namespace kbench

#endif  // KBENCH_CLIENT_KBENCH_CLIENT_H_
