// CandidateModule: the candidate's cubin loaded into the runner's context,
// with every entry point of its launch plan resolved and its parameters
// checked against the plan; and BoundPlan, the plan bound to one shape's
// buffers, ready to enqueue without allocating.
//
// Ownership: a CandidateModule owns the CUmodule (unloaded by the
// destructor) and borrows the DeviceContext. A BoundPlan owns its workspace
// buffers and parameter storage and borrows the module and the TensorSet,
// which must outlive it.
// Thread safety: none (runner thread).
#ifndef KBENCH_RUNNER_DEVICE_CANDIDATE_MODULE_H_
#define KBENCH_RUNNER_DEVICE_CANDIDATE_MODULE_H_

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "contract/launch_plan.h"
#include "kbench/v1/problem.pb.h"
#include "kbench/v1/report.pb.h"
#include "runner/device/device_context.h"
#include "runner/device/tensor_set.h"

namespace kbench {

class BoundPlan;

class CandidateModule {
 public:
  struct FunctionInfo {
    CUfunction fn = nullptr;
    int registers = 0;
    int static_smem_bytes = 0;
    int local_bytes = 0;
    int const_bytes = 0;
    int max_threads_per_block = 0;
    int num_params = 0;
  };

  // Loads `cubin` and resolves every entry of `plan`. InvalidArgument when
  // the image does not load on this GPU, an entry is missing, or an entry's
  // parameters do not match what the plan passes (count and sizes: 8 bytes
  // per pointer, 4 per int dim); kAborted after a sticky error.
  static absl::StatusOr<std::unique_ptr<CandidateModule>> Load(
      DeviceContext* ctx, const std::string& cubin, const v1::LaunchPlan& plan,
      const v1::Problem& problem);
  ~CandidateModule();

  CandidateModule(const CandidateModule&) = delete;
  CandidateModule& operator=(const CandidateModule&) = delete;

  // nullptr for an entry the plan does not launch.
  const FunctionInfo* Info(const std::string& entry) const;
  // Static shared memory per entry, for CheckDeviceLimits.
  std::map<std::string, int64_t> StaticSmem() const;

  // Binds a resolved plan to `tensors` (allocating its workspaces, or
  // using those of `workspaces_of`, a binding of the same plan that must
  // outlive the result) and raises the dynamic shared memory limit of
  // entries that need > 48 KiB. `tensor_overrides` (optional) passes other
  // buffers for some tensors by name: a baseline writes outputs of its own.
  absl::StatusOr<std::unique_ptr<BoundPlan>> Bind(
      const ConcretePlan& plan, const TensorSet& tensors,
      const BoundPlan* workspaces_of = nullptr,
      const std::map<std::string, CUdeviceptr>* tensor_overrides = nullptr);

  DeviceContext* ctx() const { return ctx_; }

 private:
  CandidateModule(DeviceContext* ctx, const v1::Problem& problem)
      : ctx_(ctx), problem_(problem) {}
  absl::Status Resolve(const v1::LaunchSpec& launch);

  DeviceContext* ctx_;
  const v1::Problem& problem_;
  CUmodule module_ = nullptr;
  std::map<std::string, FunctionInfo> functions_;
};

class BoundPlan {
 public:
  // Enqueues the workspace memsets and then every launch, in order, on the
  // context's stream. With `marks` (segments() + 1 events), records
  // marks[0] first and marks[i + 1] after segment i, where segment 0 is the
  // memsets (empty when there are no workspaces) and segment i >= 1 is
  // launch i - 1. Launch refusals (bad configuration, too many resources)
  // are InvalidArgument naming the launch's line.
  absl::Status Enqueue(const std::vector<cudaEvent_t>* marks = nullptr);
  // Enqueues the workspace memsets and launches [0, n) only.
  absl::Status EnqueueUpTo(int n);
  // Enqueues launch i only.
  absl::Status EnqueueLaunch(int i);

  // Rank `rank`'s device address of tensor or workspace `name`.
  using PeerLookup = std::function<absl::StatusOr<CUdeviceptr>(
      const std::string& name, int rank)>;
  // Fills in the `peer(NAME, RANK)` arguments of a plan of a problem that
  // spans GPUs, once every rank is bound (a peer's workspaces must exist).
  // Until then the Enqueue calls refuse to run (FailedPrecondition).
  absl::Status BindPeers(const PeerLookup& lookup);

  // Kernel launches plus workspace memsets per run.
  int launches() const;
  // The device address of workspace `name`, or 0 when the plan has none.
  CUdeviceptr WorkspacePtr(const std::string& name) const;
  // 1 + number of launches (see Enqueue).
  int segments() const { return static_cast<int>(launches_.size()) + 1; }
  const ConcretePlan& plan() const { return plan_; }

 private:
  friend class CandidateModule;
  struct Launch {
    const CandidateModule::FunctionInfo* info = nullptr;
    std::vector<CUdeviceptr> pointers;  // Storage the params point into.
    std::vector<int> ints;
    std::vector<void*> params;
  };
  // A peer() argument waiting for BindPeers.
  struct PendingPeer {
    size_t launch;   // Index into launches_.
    size_t pointer;  // Index into that launch's pointers.
    std::string name;
    int rank;
  };
  // Enqueues launch i on `s`.
  absl::Status LaunchOne(size_t i, cudaStream_t s);
  // FailedPrecondition while a peer() argument is unbound.
  absl::Status CheckPeersBound() const;

  CandidateModule* module_ = nullptr;
  ConcretePlan plan_;
  std::vector<DeviceBuffer> workspaces_;     // Empty when shared.
  std::vector<CUdeviceptr> workspace_ptrs_;  // In plan_.workspaces order.
  std::vector<Launch> launches_;
  std::vector<PendingPeer> pending_peers_;
};

// Loads a fresh copy of `cubin` and binds `cplan` to `tensors`; returns a
// function that enqueues one run of that copy and keeps the copy (module
// and binding, the binding released first) alive as long as it lives. For
// profilers that must see the module loaded after they are enabled
// (PcSampler, SassLineCounters). `problem` and `tensors` must outlive it.
// For one rank of a problem that spans GPUs, `peers` (copied) fills in the
// plan's peer() arguments, as RankedRuns binds them.
absl::StatusOr<std::function<absl::Status()>> LoadBoundCopy(
    DeviceContext* ctx, const std::string& cubin, const v1::LaunchPlan& plan,
    const v1::Problem& problem, const ConcretePlan& cplan,
    const TensorSet& tensors,
    const BoundPlan::PeerLookup& peers = BoundPlan::PeerLookup());

}  // namespace kbench

#endif  // KBENCH_RUNNER_DEVICE_CANDIDATE_MODULE_H_
