#include "runner/reference/nccl_gather.h"

#include <dlfcn.h>
#include <stdlib.h>

#include <set>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace kbench {
namespace {

// The entry points kbench calls, from libnccl.so.2.
struct NcclApi {
  decltype(&::ncclGetVersion) GetVersion = nullptr;
  decltype(&::ncclCommInitAll) CommInitAll = nullptr;
  decltype(&::ncclCommDestroy) CommDestroy = nullptr;
  decltype(&::ncclAllGather) AllGather = nullptr;
  decltype(&::ncclGroupStart) GroupStart = nullptr;
  decltype(&::ncclGroupEnd) GroupEnd = nullptr;
  decltype(&::ncclGetErrorString) GetErrorString = nullptr;
};

// Loaded once per process; never unloaded (NCCL keeps threads).
const absl::StatusOr<NcclApi>& Api() {
  static const absl::StatusOr<NcclApi>* api = [] {
    void* lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      const char* why = dlerror();
      return new absl::StatusOr<NcclApi>(absl::UnavailableError(
          absl::StrCat("libnccl.so.2 does not load here (",
                       why != nullptr ? why : "not found", ")")));
    }
    NcclApi a;
    bool all = true;
    auto get = [&](const char* name, auto* fn) {
      void* sym = dlsym(lib, name);
      all = all && sym != nullptr;
      *fn = reinterpret_cast<std::remove_pointer_t<decltype(fn)>>(sym);
    };
    get("ncclGetVersion", &a.GetVersion);
    get("ncclCommInitAll", &a.CommInitAll);
    get("ncclCommDestroy", &a.CommDestroy);
    get("ncclAllGather", &a.AllGather);
    get("ncclGroupStart", &a.GroupStart);
    get("ncclGroupEnd", &a.GroupEnd);
    get("ncclGetErrorString", &a.GetErrorString);
    if (!all) {
      return new absl::StatusOr<NcclApi>(absl::UnavailableError(
          "libnccl.so.2 lacks an entry point kbench calls (an NCCL older "
          "than 2.x?)"));
    }
    return new absl::StatusOr<NcclApi>(a);
  }();
  return *api;
}

absl::Status NcclStatus(ncclResult_t r, const char* during) {
  if (r == ncclSuccess) return absl::OkStatus();
  const char* text = Api().ok() ? (*Api()).GetErrorString(r) : nullptr;
  return absl::UnavailableError(absl::StrCat("NCCL ", during, ": ",
                                             text != nullptr ? text : "error ",
                                             static_cast<int>(r)));
}

}  // namespace

absl::StatusOr<std::string> NcclGather::LibraryVersion() {
  RETURN_IF_ERROR(Api().status());
  int v = 0;
  RETURN_IF_ERROR(NcclStatus((*Api()).GetVersion(&v), "reading its version"));
  // NCCL_VERSION(X, Y, Z) = X * 10000 + Y * 100 + Z since 2.9.
  return absl::StrCat(v / 10000, ".", (v / 100) % 100, ".", v % 100);
}

absl::StatusOr<std::unique_ptr<NcclGather>> NcclGather::Create(
    const std::vector<int>& devices) {
  if (std::set<int>(devices.begin(), devices.end()).size() != devices.size()) {
    return absl::UnavailableError("two ranks share a GPU, which NCCL refuses");
  }
  ASSIGN_OR_RETURN(const std::string version, LibraryVersion());
  // Read when NCCL makes its first communicator.
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  std::unique_ptr<NcclGather> g(
      new NcclGather(static_cast<int>(devices.size())));
  g->version_ = version;
  g->comms_.assign(devices.size(), nullptr);
  const absl::Status made = NcclStatus(
      (*Api()).CommInitAll(g->comms_.data(), static_cast<int>(devices.size()),
                           devices.data()),
      "making the communicators");
  if (!made.ok()) {
    g->comms_.clear();  // Nothing to destroy.
    return made;
  }
  return g;
}

NcclGather::~NcclGather() {
  for (ncclComm_t c : comms_) {
    if (c != nullptr) (void)(*Api()).CommDestroy(c);
  }
}

std::string NcclGather::Name() const {
  return absl::StrCat("NCCL ", version_, " all-gather");
}

absl::Status NcclGather::BeginStep() {
  return NcclStatus((*Api()).GroupStart(), "starting a group");
}

absl::Status NcclGather::EndStep() {
  return NcclStatus((*Api()).GroupEnd(), "ending a group");
}

absl::Status NcclGather::Enqueue(int rank, void* recv, int64_t recv_bytes,
                                 cudaStream_t stream) {
  ASSIGN_OR_RETURN(const void* mine, SendOf(rank, recv_bytes));
  return NcclStatus(
      (*Api()).AllGather(mine, recv, static_cast<size_t>(shard_bytes()),
                         ncclInt8, comms_[rank], stream),
      "enqueueing an all-gather");
}

}  // namespace kbench
