// IdlePool: the idle workers (long-polling waiters) as one Scheduler match
// pass sees them, and the rules for handing them out (docs/multi-gpu.md):
//  - a one-GPU job takes the longest-waiting worker of its arch;
//  - a gang of R (a multi-GPU job) takes R workers of one arch on one host
//    (same host_id, distinct GPU indices) whose GPUs all reach each other
//    with peer access (WorkerInfo.links, both ways): the lowest GPU indices
//    that do (FindGang), on the host with the fewest spare workers that
//    fits, so that larger hosts stay free for larger gangs;
//  - a gang that cannot form yet may hold one host whose connected workers
//    could form it: the R GPUs it will form on (the lowest that all reach
//    each other, FindGang over the connected workers) are kept from every
//    later job of the pass, idle or as they come back. Without the hold, a
//    stream of one-GPU jobs keeps some GPU of every host busy and the gang
//    never forms. The host's other GPUs, and other hosts, keep taking
//    work, younger gangs included.
// Workers without a host id, or without links, take one-GPU jobs only.
//
// Ownership: a value; copies what it is given.
// Thread safety: none (one pass, under the scheduler's lock).
#ifndef KBENCH_SERVER_CORE_IDLE_POOL_H_
#define KBENCH_SERVER_CORE_IDLE_POOL_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace kbench {

// The GPUs of one host, each with the GPU indices it reaches with peer
// access (as its worker reported them).
using HostGpus = std::map<int, std::set<int>>;

// The lexicographically smallest `world_size` GPU indices of `gpus` that
// pairwise reach each other both ways, or nullopt when there are none (or
// the search passes a bound on its steps: hosts have a handful of GPUs,
// and the reports come from the network).
std::optional<std::vector<int>> FindGang(const HostGpus& gpus, int world_size);

class IdlePool {
 public:
  struct Idle {
    int64_t waiter_id = 0;
    std::string arch;
    std::string host_id;  // Empty: unknown; never part of a gang.
    int gpu_index = 0;
    std::set<int> peers;  // GPU indices reached with peer access.
  };

  // `idle` in the order the workers started waiting (longest first).
  explicit IdlePool(std::vector<Idle> idle) : idle_(std::move(idle)) {}

  bool Empty() const { return idle_.empty(); }

  // Takes the longest-waiting worker of `arch` that no hold keeps.
  std::optional<int64_t> TakeOne(const std::string& arch);

  // Takes `world_size` workers of `arch` on one host that form a gang,
  // ordered by GPU index (the leader, rank 0, first); nullopt when no host
  // has that many spare that do.
  std::optional<std::vector<int64_t>> TakeGang(const std::string& arch,
                                               int world_size);

  // Holds, for a gang of `world_size` that TakeGang could not place, the
  // GPUs it will form on, on the host not yet held for `arch` whose
  // connected workers of it (`live`: per host id, as
  // WorkerRegistry::LiveHostGpus gives them) could form it, with the most
  // idle (ties: the smallest host id). Returns that host id, or "" when no
  // host qualifies.
  std::string Hold(const std::string& arch, int world_size,
                   const std::map<std::string, HostGpus>& live);

 private:
  using Key = std::pair<std::string, std::string>;  // (arch, host_id)
  // Whether a hold keeps `w`'s GPU.
  bool Held(const Idle& w) const;
  // Idle workers on a host that no hold keeps.
  int Spare(const Key& key) const;
  // Idle workers of `arch` per host: distinct GPU indices, with the first
  // waiter of each.
  std::map<std::string, std::map<int, size_t>> Hosts(
      const std::string& arch) const;
  void Erase(const std::vector<size_t>& positions);

  std::vector<Idle> idle_;             // Not yet taken, longest-waiting first.
  std::map<Key, std::set<int>> held_;  // The GPU indices each hold keeps.
};

}  // namespace kbench

#endif  // KBENCH_SERVER_CORE_IDLE_POOL_H_
