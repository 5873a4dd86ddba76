#include "runner/device/candidate_module.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "contract/problem_util.h"
#include "runner/device/cuda_status.h"

namespace kbench {
namespace {

constexpr int kDefaultDynamicSmemLimit = 48 * 1024;

// Size in bytes of the parameter `name` as the plan passes it.
int ArgBytes(const v1::Problem& problem, const std::string& name) {
  return IsLaunchDim(problem, name) ? 4 : 8;
}

std::vector<std::string> DefaultArgs(const v1::Problem& problem,
                                     const v1::LaunchPlan& plan) {
  std::vector<std::string> args(problem.signature().begin(),
                                problem.signature().end());
  for (const v1::WorkspaceSpec& w : plan.workspaces()) args.push_back(w.name());
  return args;
}

}  // namespace

absl::StatusOr<std::unique_ptr<CandidateModule>> CandidateModule::Load(
    DeviceContext* ctx, const std::string& cubin, const v1::LaunchPlan& plan,
    const v1::Problem& problem) {
  std::unique_ptr<CandidateModule> m(new CandidateModule(ctx, problem));
  const CudaDriver& drv = ctx->driver();
  const CUresult r = drv.ModuleLoadData(&m->module_, cubin.data());
  if (r != CUDA_SUCCESS) {
    return CuStatus(drv, r, "loading the compiled kernel on this GPU",
                    absl::StatusCode::kInvalidArgument);
  }
  for (const v1::LaunchSpec& launch : plan.launches()) {
    RETURN_IF_ERROR(m->Resolve(launch));
    // Parameter check against what this launch passes.
    const FunctionInfo& info = m->functions_[launch.entry()];
    std::vector<std::string> args(launch.args().begin(), launch.args().end());
    if (args.empty()) args = DefaultArgs(problem, plan);
    bool sizes_ok = info.num_params == static_cast<int>(args.size());
    for (int i = 0; sizes_ok && i < info.num_params; ++i) {
      size_t offset = 0, size = 0;
      drv.FuncGetParamInfo(info.fn, i, &offset, &size);
      sizes_ok = static_cast<int>(size) == ArgBytes(problem, args[i]);
    }
    if (!sizes_ok) {
      std::vector<std::string> shown;
      shown.reserve(args.size());
      for (const std::string& a : args) {
        shown.push_back(
            absl::StrCat(a, IsLaunchDim(problem, a) ? " (int)" : " (pointer)"));
      }
      std::string msg = absl::StrCat(
          "line ", launch.line(), ": kernel '", launch.entry(), "' takes ",
          info.num_params, " parameter(s), but the plan passes ", args.size(),
          ": ", absl::StrJoin(shown, ", "), ".");
      if (launch.args().empty()) {
        absl::StrAppend(
            &msg, " Declare it as: ", EntryPrototype(problem, launch.entry()),
            " (plus one pointer per workspace), or list the "
            "parameters with args(...).");
      }
      return absl::InvalidArgumentError(msg);
    }
  }
  return m;
}

absl::Status CandidateModule::Resolve(const v1::LaunchSpec& launch) {
  if (functions_.count(launch.entry())) return absl::OkStatus();
  const CudaDriver& drv = ctx_->driver();
  FunctionInfo info;
  const CUresult r =
      drv.ModuleGetFunction(&info.fn, module_, launch.entry().c_str());
  if (r != CUDA_SUCCESS) {
    return absl::InvalidArgumentError(absl::StrCat(
        "line ", launch.line(), ": the compiled module has no kernel '",
        launch.entry(), "' (", drv.ErrorText(r),
        "); define it as extern \"C\" __global__"));
  }
  auto attr = [&](CUfunction_attribute a) {
    int v = 0;
    drv.FuncGetAttribute(&v, a, info.fn);
    return v;
  };
  info.registers = attr(CU_FUNC_ATTRIBUTE_NUM_REGS);
  info.static_smem_bytes = attr(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
  info.local_bytes = attr(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
  info.const_bytes = attr(CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES);
  info.max_threads_per_block = attr(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  size_t offset = 0, size = 0;
  while (drv.FuncGetParamInfo(info.fn, info.num_params, &offset, &size) ==
         CUDA_SUCCESS) {
    ++info.num_params;
  }
  functions_[launch.entry()] = info;
  return absl::OkStatus();
}

CandidateModule::~CandidateModule() {
  if (module_ != nullptr) ctx_->driver().ModuleUnload(module_);
}

const CandidateModule::FunctionInfo* CandidateModule::Info(
    const std::string& entry) const {
  auto it = functions_.find(entry);
  return it == functions_.end() ? nullptr : &it->second;
}

std::map<std::string, int64_t> CandidateModule::StaticSmem() const {
  std::map<std::string, int64_t> out;
  for (const auto& [name, info] : functions_) {
    out[name] = info.static_smem_bytes;
  }
  return out;
}

absl::StatusOr<std::unique_ptr<BoundPlan>> CandidateModule::Bind(
    const ConcretePlan& plan, const TensorSet& tensors,
    const BoundPlan* workspaces_of,
    const std::map<std::string, CUdeviceptr>* tensor_overrides) {
  auto bound = std::make_unique<BoundPlan>();
  bound->module_ = this;
  bound->plan_ = plan;
  std::map<std::string, CUdeviceptr> workspace_ptrs;
  for (size_t i = 0; i < plan.workspaces.size(); ++i) {
    const ConcreteWorkspace& w = plan.workspaces[i];
    if (workspaces_of != nullptr) {
      if (i >= workspaces_of->workspace_ptrs_.size()) {
        return absl::InternalError("the shared binding has fewer workspaces");
      }
      workspace_ptrs[w.name] = workspaces_of->workspace_ptrs_[i];
      bound->workspace_ptrs_.push_back(workspace_ptrs[w.name]);
      continue;
    }
    auto buffer = DeviceBuffer::Allocate(w.bytes);
    if (!buffer.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "workspace '", w.name, "' of ", w.bytes,
          " bytes could not be allocated: ", buffer.status().message()));
    }
    workspace_ptrs[w.name] = reinterpret_cast<CUdeviceptr>(buffer->get());
    bound->workspace_ptrs_.push_back(workspace_ptrs[w.name]);
    bound->workspaces_.push_back(*std::move(buffer));
  }
  const CudaDriver& drv = ctx_->driver();
  for (const ConcreteLaunch& cl : plan.launches) {
    BoundPlan::Launch l;
    l.info = Info(cl.entry);
    if (l.info == nullptr) {
      return absl::InternalError(
          absl::StrCat("entry '", cl.entry, "' was not resolved"));
    }
    // Past 48 KiB of static + dynamic shared memory, the dynamic limit must
    // be raised explicitly.
    if (cl.smem_bytes > 0 &&
        cl.smem_bytes + l.info->static_smem_bytes > kDefaultDynamicSmemLimit) {
      const CUresult r = drv.FuncSetAttribute(
          l.info->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
          static_cast<int>(cl.smem_bytes));
      if (r != CUDA_SUCCESS) {
        return CuStatus(
            drv, r,
            absl::StrCat("raising the dynamic shared memory of '", cl.entry,
                         "' to ", cl.smem_bytes, " bytes (line ", cl.line, ")"),
            absl::StatusCode::kInvalidArgument);
      }
    }
    l.pointers.reserve(cl.args.size());
    l.ints.reserve(cl.args.size());
    for (size_t a = 0; a < cl.args.size(); ++a) {
      const std::string& arg = cl.args[a];
      const int peer = a < cl.arg_peers.size() ? cl.arg_peers[a] : -1;
      if (peer >= 0) {
        // Another rank's buffer: filled in by BindPeers once every rank's
        // workspaces exist.
        bound->pending_peers_.push_back(
            {bound->launches_.size(), l.pointers.size(), arg, peer});
        l.pointers.push_back(0);
        l.params.push_back(&l.pointers.back());
      } else if (IsLaunchDim(problem_, arg)) {
        auto dim = tensors.dims().find(arg);
        if (dim == tensors.dims().end()) {
          return absl::InternalError(absl::StrCat(
              "line ", cl.line, ": no value for '", arg, "' at this shape"));
        }
        l.ints.push_back(static_cast<int>(dim->second));
        l.params.push_back(&l.ints.back());
      } else if (tensor_overrides != nullptr &&
                 tensor_overrides->count(arg) > 0) {
        l.pointers.push_back(tensor_overrides->at(arg));
        l.params.push_back(&l.pointers.back());
      } else if (const TensorSet::Tensor* t = tensors.Find(arg)) {
        l.pointers.push_back(reinterpret_cast<CUdeviceptr>(t->buffer.get()));
        l.params.push_back(&l.pointers.back());
      } else if (workspace_ptrs.count(arg)) {
        l.pointers.push_back(workspace_ptrs[arg]);
        l.params.push_back(&l.pointers.back());
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat("line ", cl.line, ": args() names '", arg,
                         "', which is no tensor, dim or workspace"));
      }
    }
    bound->launches_.push_back(std::move(l));
  }
  return bound;
}

absl::Status BoundPlan::BindPeers(const PeerLookup& lookup) {
  for (const PendingPeer& p : pending_peers_) {
    ASSIGN_OR_RETURN(const CUdeviceptr ptr, lookup(p.name, p.rank));
    launches_[p.launch].pointers[p.pointer] = ptr;
  }
  pending_peers_.clear();
  return absl::OkStatus();
}

absl::Status BoundPlan::CheckPeersBound() const {
  if (pending_peers_.empty()) return absl::OkStatus();
  const PendingPeer& p = pending_peers_.front();
  return absl::FailedPreconditionError(absl::StrCat(
      "line ", plan_.launches[p.launch].line, ": the plan passes rank ", p.rank,
      "'s '", p.name,
      "', but this run has no other ranks bound (a harness fault)"));
}

CUdeviceptr BoundPlan::WorkspacePtr(const std::string& name) const {
  for (size_t i = 0; i < plan_.workspaces.size(); ++i) {
    if (plan_.workspaces[i].name == name) return workspace_ptrs_[i];
  }
  return 0;
}

int BoundPlan::launches() const {
  return static_cast<int>(launches_.size() + workspaces_.size());
}

absl::Status BoundPlan::Enqueue(const std::vector<cudaEvent_t>* marks) {
  RETURN_IF_ERROR(CheckPeersBound());
  cudaStream_t s = module_->ctx()->stream();
  if (marks) CUDA_RETURN_IF_ERROR(cudaEventRecord((*marks)[0], s), "timing");
  for (DeviceBuffer& w : workspaces_) {
    CUDA_RETURN_IF_ERROR(cudaMemsetAsync(w.get(), 0, w.bytes(), s),
                         "zero-filling a workspace");
  }
  if (marks) CUDA_RETURN_IF_ERROR(cudaEventRecord((*marks)[1], s), "timing");
  for (size_t i = 0; i < launches_.size(); ++i) {
    RETURN_IF_ERROR(LaunchOne(i, s));
    if (marks) {
      CUDA_RETURN_IF_ERROR(cudaEventRecord((*marks)[i + 2], s), "timing");
    }
  }
  return absl::OkStatus();
}

absl::Status BoundPlan::EnqueueUpTo(int n) {
  RETURN_IF_ERROR(CheckPeersBound());
  cudaStream_t s = module_->ctx()->stream();
  for (DeviceBuffer& w : workspaces_) {
    CUDA_RETURN_IF_ERROR(cudaMemsetAsync(w.get(), 0, w.bytes(), s),
                         "zero-filling a workspace");
  }
  for (size_t i = 0; i < launches_.size() && static_cast<int>(i) < n; ++i) {
    RETURN_IF_ERROR(LaunchOne(i, s));
  }
  return absl::OkStatus();
}

absl::Status BoundPlan::EnqueueLaunch(int i) {
  RETURN_IF_ERROR(CheckPeersBound());
  if (i < 0 || i >= static_cast<int>(launches_.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("the plan has no launch ", i));
  }
  return LaunchOne(static_cast<size_t>(i), module_->ctx()->stream());
}

absl::Status BoundPlan::LaunchOne(size_t i, cudaStream_t s) {
  const CudaDriver& drv = module_->ctx()->driver();
  const Launch& l = launches_[i];
  const ConcreteLaunch& cl = plan_.launches[i];
  const CUresult r = drv.LaunchKernel(
      l.info->fn, cl.grid[0], cl.grid[1], cl.grid[2], cl.block[0], cl.block[1],
      cl.block[2], static_cast<unsigned>(cl.smem_bytes), s,
      const_cast<void**>(l.params.data()), nullptr);
  if (r == CUDA_SUCCESS) return absl::OkStatus();
  std::string during = absl::StrCat(
      "launching '", cl.entry, "' (line ", cl.line, ") with grid(", cl.grid[0],
      ", ", cl.grid[1], ", ", cl.grid[2], ") block(", cl.block[0], ", ",
      cl.block[1], ", ", cl.block[2], ") smem(", cl.smem_bytes, ")");
  if (r == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES) {
    absl::StrAppend(&during, "; the kernel uses ", l.info->registers,
                    " registers/thread x ",
                    cl.block[0] * cl.block[1] * cl.block[2],
                    " threads; lower the block size or the registers");
  }
  return CuStatus(drv, r, during, absl::StatusCode::kInvalidArgument);
}

absl::StatusOr<std::function<absl::Status()>> LoadBoundCopy(
    DeviceContext* ctx, const std::string& cubin, const v1::LaunchPlan& plan,
    const v1::Problem& problem, const ConcretePlan& cplan,
    const TensorSet& tensors, const BoundPlan::PeerLookup& peers) {
  struct Copy {
    std::unique_ptr<CandidateModule> module;
    std::unique_ptr<BoundPlan> bound;  // Destroyed first.
  };
  auto copy = std::make_shared<Copy>();
  ASSIGN_OR_RETURN(copy->module,
                   CandidateModule::Load(ctx, cubin, plan, problem));
  ASSIGN_OR_RETURN(copy->bound, copy->module->Bind(cplan, tensors));
  if (peers) RETURN_IF_ERROR(copy->bound->BindPeers(peers));
  return [copy]() { return copy->bound->Enqueue(); };
}

}  // namespace kbench
