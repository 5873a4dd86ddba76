// RankGroup: the runner's hold on the GPUs of a job whose problem spans
// GPUs (docs/multi-gpu.md): one DeviceContext per rank, rank r on visible
// device devices[r], with peer access enabled between every pair of
// distinct devices, so that a kernel on one rank can read and write a
// peer's buffers through the pointers its launch plan names with
// peer(NAME, RANK).
//
// kbworker's gang leader starts the runner with CUDA_VISIBLE_DEVICES
// listing the gang's GPUs in rank order, so rank r is device r. Several
// ranks may share one device (a test on one GPU: kbrunner --rank-devices
// 0,0); they then share its primary context, each with its own stream, and
// kernels of different ranks that wait on each other may not be resident
// together.
//
// Ownership: borrows rank 0's context (the runner's own, which must
// outlive the group); owns the others. Thread safety: none (runner
// thread). Every call that touches a rank's stream must run with that
// rank's device selected (Select); the destructor selects rank 0's again.
#ifndef KBENCH_RUNNER_DEVICE_RANK_GROUP_H_
#define KBENCH_RUNNER_DEVICE_RANK_GROUP_H_

#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runner/device/device_context.h"

namespace kbench {

class RankGroup {
 public:
  struct Options {
    // The visible device ordinal of each rank; its size is the world size
    // (1 to kMaxWorldSize). Rank 0's must be the borrowed context's.
    std::vector<int> devices;
  };

  // FailedPrecondition when a rank's device is not visible, or two of the
  // devices cannot reach each other's memory (no peer-to-peer).
  static absl::StatusOr<std::unique_ptr<RankGroup>> Create(
      DeviceContext* rank0, const Options& options);
  ~RankGroup();

  RankGroup(const RankGroup&) = delete;
  RankGroup& operator=(const RankGroup&) = delete;

  int world_size() const { return static_cast<int>(devices_.size()); }
  DeviceContext* ctx(int rank) const { return ctxs_[rank]; }
  int device(int rank) const { return devices_[rank]; }
  // Makes rank `rank`'s device current for this thread.
  absl::Status Select(int rank) const;

 private:
  RankGroup() = default;

  std::vector<int> devices_;
  std::vector<DeviceContext*> ctxs_;                   // By rank.
  std::vector<std::unique_ptr<DeviceContext>> owned_;  // Ranks 1 and up.
};

// Objects made one per rank (a candidate's module, a baseline), each
// destroyed with its rank's device selected: a module unloads from the
// current context. Borrows the group, which must outlive it.
template <typename T>
class PerRank {
 public:
  explicit PerRank(const RankGroup* group) : group_(group) {}
  ~PerRank() { Clear(); }
  PerRank(const PerRank&) = delete;
  PerRank& operator=(const PerRank&) = delete;

  // Adds the next rank's object (rank size()).
  void Add(std::unique_ptr<T> item) { items_.push_back(std::move(item)); }
  int size() const { return static_cast<int>(items_.size()); }
  T* at(int rank) const { return items_[rank].get(); }
  std::vector<T*> ptrs() const {
    std::vector<T*> out;
    for (const std::unique_ptr<T>& item : items_) out.push_back(item.get());
    return out;
  }
  // Destroys every rank's object, then selects rank 0's device again.
  void Clear() {
    for (size_t r = 0; r < items_.size(); ++r) {
      (void)group_->Select(static_cast<int>(r));
      items_[r].reset();
    }
    items_.clear();
    (void)group_->Select(0);
  }

 private:
  const RankGroup* group_;
  std::vector<std::unique_ptr<T>> items_;
};

}  // namespace kbench

#endif  // KBENCH_RUNNER_DEVICE_RANK_GROUP_H_
