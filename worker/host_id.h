// HostId: what kbworker reports as WorkerInfo.host_id, the same for every
// worker of one host, so that kbd can place a multi-GPU job on GPUs of one
// host (docs/multi-gpu.md). Derived from the machine id (machine-id(5)),
// not the hostname: two containers on one host have different hostnames.
// A container often has no machine id of its own (or a fresh one): there
// the operator passes the host's with kbworker --host-id, or mounts the
// host's /etc/machine-id.
//
// The machine id is not shown as it is: it keys an HMAC-SHA256 of an
// application id of kbench's own, as systemd's
// sd_id128_get_machine_app_specific derives one. machine-id(5) asks that
// the raw id not be shown to others, and kbd shows host ids on its
// dashboard.
//
// Thread safety: stateless; safe to call concurrently.
#ifndef KBENCH_WORKER_HOST_ID_H_
#define KBENCH_WORKER_HOST_ID_H_

#include <string>
#include <vector>

namespace kbench {

// Where machine-id(5) says the id is, in the order it is read.
std::vector<std::string> DefaultMachineIdFiles();

// "h-" and 32 hex digits derived from the first of `files` that holds a
// machine id (32 hex digits on one line); empty when none does (the caller
// reports no host id and says why in a log line).
std::string HostIdFromMachineId(const std::vector<std::string>& files);

}  // namespace kbench

#endif  // KBENCH_WORKER_HOST_ID_H_
