// The kernel contract as an agent needs it for one problem: short rules, the
// entry prototype, the `// @kb` launch-plan syntax, the shapes it is checked
// on and a complete example kernel. (docs/kernel-contract.md is the long
// form.)
// Thread safety: pure function.
#ifndef KBENCH_CONTRACT_CONTRACT_TEXT_H_
#define KBENCH_CONTRACT_CONTRACT_TEXT_H_

#include <string>

#include "kbench/v1/problem.pb.h"

namespace kbench {

// `problem` should be the public view (no hidden shape sets).
std::string KernelContractText(const v1::Problem& problem);

}  // namespace kbench

#endif  // KBENCH_CONTRACT_CONTRACT_TEXT_H_
