// Ids of things kbd makes (jobs, sessions, sweeps): a prefix naming the kind
// and 48 random bits as 12 lowercase hex digits, e.g. "j-3f09a1c2b4d5".
// Random, not counted, so that ids from before a restart are not reused and
// one id tells nothing about how many others exist.
//
// Thread safety: safe to call from any thread.
#ifndef KBENCH_BASE_RANDOM_ID_H_
#define KBENCH_BASE_RANDOM_ID_H_

#include <string>

#include "absl/strings/string_view.h"

namespace kbench {

std::string NewRandomId(absl::string_view prefix);

}  // namespace kbench

#endif  // KBENCH_BASE_RANDOM_ID_H_
