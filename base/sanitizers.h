// Whether this build runs under a sanitizer that reserves a large address
// space (ASan, TSan): RLIMIT_AS, which bounds a compile's memory, cannot be
// set under one (the sanitizer's own mappings exceed any useful limit), so
// that limit is skipped there, and its tests skip too.
#ifndef KBENCH_BASE_SANITIZERS_H_
#define KBENCH_BASE_SANITIZERS_H_

namespace kbench {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kAddressSpaceSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kAddressSpaceSanitizer = true;
#else
inline constexpr bool kAddressSpaceSanitizer = false;
#endif
#else
inline constexpr bool kAddressSpaceSanitizer = false;
#endif

}  // namespace kbench

#endif  // KBENCH_BASE_SANITIZERS_H_
