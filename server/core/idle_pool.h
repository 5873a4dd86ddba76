// IdlePool: the idle workers (long-polling waiters) as one Scheduler match
// pass sees them, and the rules for handing them out (docs/multi-gpu.md):
//  - a one-GPU job takes the longest-waiting worker of its arch;
//  - a gang of R (a multi-GPU job) takes R workers of one arch on one host
//    (same host_id, distinct GPU indices), the lowest GPU indices, on the
//    host with the fewest spare workers that fits, so that larger hosts stay
//    free for larger gangs;
//  - a gang that cannot form yet may hold one host that has R connected
//    workers of its arch: up to R of that host's idle workers are kept from
//    every later job of the pass. Without the hold, a stream of one-GPU jobs
//    keeps some GPU of every host busy and the gang never forms. The
//    host's GPUs beyond R, and other hosts, keep taking work.
// Workers without a host id take one-GPU jobs only.
//
// Ownership: a value; copies what it is given.
// Thread safety: none (one pass, under the scheduler's lock).
#ifndef KBENCH_SERVER_CORE_IDLE_POOL_H_
#define KBENCH_SERVER_CORE_IDLE_POOL_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kbench {

class IdlePool {
 public:
  struct Idle {
    int64_t waiter_id = 0;
    std::string arch;
    std::string host_id;  // Empty: unknown; never part of a gang.
    int gpu_index = 0;
  };

  // `idle` in the order the workers started waiting (longest first).
  explicit IdlePool(std::vector<Idle> idle) : idle_(std::move(idle)) {}

  bool Empty() const { return idle_.empty(); }

  // Takes the longest-waiting worker of `arch` that no hold keeps.
  std::optional<int64_t> TakeOne(const std::string& arch);

  // Takes `world_size` workers of `arch` on one host, ordered by GPU index
  // (the leader, rank 0, first); nullopt when no host has that many spare.
  std::optional<std::vector<int64_t>> TakeGang(const std::string& arch,
                                               int world_size);

  // Holds, for a gang of `world_size` that TakeGang could not place, the
  // host not yet held for `arch` with at least `world_size` connected
  // workers of it (`live`: per host id, WorkerRegistry::LiveOnHosts) and
  // the most idle ones (ties: the smallest host id). Returns that host id,
  // or "" when no host qualifies.
  std::string Hold(const std::string& arch, int world_size,
                   const std::map<std::string, int>& live);

 private:
  using Key = std::pair<std::string, std::string>;  // (arch, host_id)
  // Idle workers on a host, less what holds keep.
  int Spare(const Key& key) const;
  // Idle workers of `arch` per host: distinct GPU indices, with the first
  // waiter of each.
  std::map<std::string, std::map<int, size_t>> Hosts(
      const std::string& arch) const;
  void Erase(const std::vector<size_t>& positions);

  std::vector<Idle> idle_;  // Not yet taken, longest-waiting first.
  std::map<Key, int> held_;
};

}  // namespace kbench

#endif  // KBENCH_SERVER_CORE_IDLE_POOL_H_
