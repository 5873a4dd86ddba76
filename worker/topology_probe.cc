#include "worker/topology_probe.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/process/run_child.h"

namespace kbench {
namespace {

// Far above any host's links (64 of them take about 1 KiB).
constexpr size_t kMaxTopologyBytes = 64 << 10;

}  // namespace

absl::StatusOr<v1::RunnerTopology> ProbeTopology(
    const TopologyProbeOptions& options) {
  const char* tmp = std::getenv("TMPDIR");
  std::string path = absl::StrCat(tmp != nullptr && *tmp ? tmp : "/tmp",
                                  "/kbworker-topology-XXXXXX");
  const int fd = mkstemp(path.data());
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot create a file for the topology in ", path));
  }
  close(fd);
  struct Remove {
    std::string path;
    ~Remove() {
      std::error_code ec;
      std::filesystem::remove(path, ec);
    }
  } remove{path};
  absl::StatusOr<ChildExit> exit =
      RunChild({options.runner, "--topology", path, "--device",
                std::to_string(options.gpu)},
               options.timeout);
  if (!exit.ok()) {
    return absl::UnavailableError(
        absl::StrCat("starting the topology probe: ", exit.status().message()));
  }
  if (exit->timed_out || exit->exit_code != 0) {
    return absl::UnavailableError(absl::StrCat(
        "the topology probe (", options.runner, " --topology) ",
        exit->timed_out
            ? "ran past its time limit"
            : absl::StrCat("exited with status ", exit->exit_code,
                           exit->signal != 0
                               ? absl::StrCat(" (signal ", exit->signal, ")")
                               : "")));
  }
  std::ifstream in(path, std::ios::binary);
  std::string bytes;
  bytes.resize(kMaxTopologyBytes + 1);
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  bytes.resize(static_cast<size_t>(in.gcount()));
  v1::RunnerTopology topology;
  if (bytes.size() > kMaxTopologyBytes || !topology.ParseFromString(bytes)) {
    return absl::DataLossError(
        "the topology probe wrote something that is not a RunnerTopology");
  }
  return topology;
}

}  // namespace kbench
