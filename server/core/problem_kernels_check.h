// CheckProblemKernels: compiles a problem's golden, baseline and example
// kernels with NVRTC through the CompileService (in a kbcompile child where kbd
// has a compile sandbox, and cached by content digest, so a restart
// compiles nothing again) for one arch, and checks that each kernel's
// launch plan names only kernels the source defines. kbd calls it for
// every problem at start (ProblemRegistry::Options::check): a problem
// whose kernels do not compile is refused there, not at its first job.
//
// Thread safety: safe to call from several threads (the service is).
#ifndef KBENCH_SERVER_CORE_PROBLEM_KERNELS_CHECK_H_
#define KBENCH_SERVER_CORE_PROBLEM_KERNELS_CHECK_H_

#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "kbench/v1/problem.pb.h"
#include "server/core/compile_service.h"

namespace kbench {

// InvalidArgument naming the kernel's file, and the first compile error
// with its line, when a kernel does not compile or its plan names a kernel
// it does not define; ResourceExhausted when its compile ran into the
// sandbox's CPU or memory limit. Any other error says the kernels could not
// be checked (the compiler is unavailable; DeadlineExceeded after
// `timeout`), not that they are wrong.
absl::Status CheckProblemKernels(CompileService* compiles,
                                 const std::string& arch,
                                 const v1::Problem& problem,
                                 absl::Duration timeout = absl::Seconds(120));

}  // namespace kbench

#endif  // KBENCH_SERVER_CORE_PROBLEM_KERNELS_CHECK_H_
