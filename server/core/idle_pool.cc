#include "server/core/idle_pool.h"

#include <algorithm>
#include <cstddef>

namespace kbench {

int IdlePool::Spare(const Key& key) const {
  int idle = 0;
  for (const Idle& w : idle_) {
    if (w.arch == key.first && w.host_id == key.second) ++idle;
  }
  auto it = held_.find(key);
  return idle - (it == held_.end() ? 0 : it->second);
}

std::map<std::string, std::map<int, size_t>> IdlePool::Hosts(
    const std::string& arch) const {
  std::map<std::string, std::map<int, size_t>> hosts;
  for (size_t i = 0; i < idle_.size(); ++i) {
    const Idle& w = idle_[i];
    if (w.arch != arch || w.host_id.empty()) continue;
    // Two worker ids claiming one GPU of a host count once: a gang never
    // puts two ranks on one GPU.
    hosts[w.host_id].emplace(w.gpu_index, i);
  }
  return hosts;
}

void IdlePool::Erase(const std::vector<size_t>& positions) {
  std::vector<size_t> sorted = positions;
  std::sort(sorted.rbegin(), sorted.rend());
  for (size_t i : sorted)
    idle_.erase(idle_.begin() + static_cast<std::ptrdiff_t>(i));
}

std::optional<int64_t> IdlePool::TakeOne(const std::string& arch) {
  for (size_t i = 0; i < idle_.size(); ++i) {
    const Idle& w = idle_[i];
    if (w.arch != arch) continue;
    if (!w.host_id.empty() && Spare({w.arch, w.host_id}) <= 0) continue;
    const int64_t id = w.waiter_id;
    Erase({i});
    return id;
  }
  return std::nullopt;
}

std::optional<std::vector<int64_t>> IdlePool::TakeGang(const std::string& arch,
                                                       int world_size) {
  if (world_size < 1) return std::nullopt;
  const std::string* best = nullptr;
  int best_spare = 0;
  const auto hosts = Hosts(arch);
  for (const auto& [host, gpus] : hosts) {
    // Distinct GPUs, and no more than the holds leave.
    const int spare =
        std::min(static_cast<int>(gpus.size()), Spare({arch, host}));
    if (spare < world_size) continue;
    if (best == nullptr || spare < best_spare) {
      best = &host;
      best_spare = spare;
    }
  }
  if (best == nullptr) return std::nullopt;
  std::vector<int64_t> gang;
  std::vector<size_t> positions;
  for (const auto& [gpu, pos] : hosts.at(*best)) {
    if (static_cast<int>(gang.size()) == world_size) break;
    gang.push_back(idle_[pos].waiter_id);
    positions.push_back(pos);
  }
  Erase(positions);
  return gang;
}

std::string IdlePool::Hold(const std::string& arch, int world_size,
                           const std::map<std::string, int>& live) {
  std::string best;
  int best_idle = -1;
  for (const auto& [host, connected] : live) {
    if (connected < world_size || held_.count({arch, host}) > 0) continue;
    const int idle = Spare({arch, host});
    if (idle > best_idle) {
      best = host;
      best_idle = idle;
    }
  }
  if (!best.empty()) held_[{arch, best}] = world_size;
  return best;
}

}  // namespace kbench
