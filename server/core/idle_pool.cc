#include "server/core/idle_pool.h"

#include <algorithm>
#include <cstddef>

namespace kbench {
namespace {

// Steps FindGang may take (a step adds or drops one GPU).
constexpr int kMaxGangSearchSteps = 100000;

bool Linked(const HostGpus& gpus, int a, int b) {
  return gpus.at(a).count(b) > 0 && gpus.at(b).count(a) > 0;
}

// Extends `chosen` with GPUs from position `next` of `order` on; true when
// it reached `world_size`.
bool Extend(const HostGpus& gpus, const std::vector<int>& order, size_t next,
            int world_size, std::vector<int>* chosen, int* steps) {
  if (static_cast<int>(chosen->size()) == world_size) return true;
  for (size_t i = next; i < order.size(); ++i) {
    if (++*steps > kMaxGangSearchSteps) return false;
    // Not enough GPUs left to fill the gang.
    if (static_cast<int>(chosen->size() + (order.size() - i)) < world_size) {
      return false;
    }
    const int gpu = order[i];
    if (!std::all_of(chosen->begin(), chosen->end(),
                     [&](int c) { return Linked(gpus, c, gpu); })) {
      continue;
    }
    chosen->push_back(gpu);
    if (Extend(gpus, order, i + 1, world_size, chosen, steps)) return true;
    chosen->pop_back();
  }
  return false;
}

}  // namespace

std::optional<std::vector<int>> FindGang(const HostGpus& gpus, int world_size) {
  if (world_size < 1 || static_cast<int>(gpus.size()) < world_size) {
    return std::nullopt;
  }
  std::vector<int> order;
  order.reserve(gpus.size());
  for (const auto& [gpu, peers] : gpus) order.push_back(gpu);
  std::vector<int> chosen;
  int steps = 0;
  if (!Extend(gpus, order, 0, world_size, &chosen, &steps)) {
    return std::nullopt;
  }
  return chosen;
}

bool IdlePool::Held(const Idle& w) const {
  if (w.host_id.empty()) return false;
  auto it = held_.find({w.arch, w.host_id});
  return it != held_.end() && it->second.count(w.gpu_index) > 0;
}

int IdlePool::Spare(const Key& key) const {
  int idle = 0;
  for (const Idle& w : idle_) {
    if (w.arch == key.first && w.host_id == key.second && !Held(w)) ++idle;
  }
  return idle;
}

std::map<std::string, std::map<int, size_t>> IdlePool::Hosts(
    const std::string& arch) const {
  std::map<std::string, std::map<int, size_t>> hosts;
  for (size_t i = 0; i < idle_.size(); ++i) {
    const Idle& w = idle_[i];
    if (w.arch != arch || w.host_id.empty() || Held(w)) continue;
    // Two worker ids claiming one GPU of a host count once: a gang never
    // puts two ranks on one GPU.
    hosts[w.host_id].emplace(w.gpu_index, i);
  }
  return hosts;
}

void IdlePool::Erase(const std::vector<size_t>& positions) {
  std::vector<size_t> sorted = positions;
  std::sort(sorted.rbegin(), sorted.rend());
  for (size_t i : sorted) {
    idle_.erase(idle_.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

std::optional<int64_t> IdlePool::TakeOne(const std::string& arch) {
  for (size_t i = 0; i < idle_.size(); ++i) {
    const Idle& w = idle_[i];
    if (w.arch != arch || Held(w)) continue;
    const int64_t id = w.waiter_id;
    Erase({i});
    return id;
  }
  return std::nullopt;
}

std::optional<std::vector<int64_t>> IdlePool::TakeGang(const std::string& arch,
                                                       int world_size) {
  if (world_size < 1) return std::nullopt;
  std::optional<std::vector<size_t>> best;
  int best_spare = 0;
  for (const auto& [host, gpus] : Hosts(arch)) {
    // Distinct GPUs that no hold keeps.
    const int spare = static_cast<int>(gpus.size());
    if (spare < world_size || (best && spare >= best_spare)) continue;
    HostGpus linked;
    for (const auto& [gpu, pos] : gpus) linked[gpu] = idle_[pos].peers;
    std::optional<std::vector<int>> gang = FindGang(linked, world_size);
    if (!gang) continue;
    best.emplace();
    for (int gpu : *gang) best->push_back(gpus.at(gpu));
    best_spare = spare;
  }
  if (!best) return std::nullopt;
  std::vector<int64_t> gang;
  gang.reserve(best->size());
  for (size_t pos : *best) gang.push_back(idle_[pos].waiter_id);
  Erase(*best);
  return gang;
}

std::string IdlePool::Hold(const std::string& arch, int world_size,
                           const std::map<std::string, HostGpus>& live) {
  std::string best;
  std::vector<int> best_gang;
  int best_idle = -1;
  for (const auto& [host, gpus] : live) {
    if (held_.count({arch, host}) > 0) continue;
    std::optional<std::vector<int>> gang = FindGang(gpus, world_size);
    if (!gang) continue;
    const int idle = Spare({arch, host});
    if (idle > best_idle) {
      best = host;
      best_gang = *std::move(gang);
      best_idle = idle;
    }
  }
  if (!best.empty()) {
    held_[{arch, best}] = std::set<int>(best_gang.begin(), best_gang.end());
  }
  return best;
}

}  // namespace kbench
