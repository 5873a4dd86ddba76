// Whether this build runs under a sanitizer that reserves a large address
// space (ASan, TSan): RLIMIT_AS, which bounds a compile's memory, cannot be
// set under one (the sanitizer's own mappings exceed any useful limit), so
// that limit is skipped there, and its tests skip too.
//
// KBENCH_SANITIZER_RUNTIME is 1 when a sanitizer runtime (ASan, TSan) is
// linked in, so that its interface (sanitizer/common_interface_defs.h) may
// be called: the compile jail tells it a sandbox is coming, and TSan then
// stops its background thread, which would otherwise make the process
// multi-threaded and the jail refuse it.
#ifndef KBENCH_BASE_SANITIZERS_H_
#define KBENCH_BASE_SANITIZERS_H_

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define KBENCH_SANITIZER_RUNTIME 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define KBENCH_SANITIZER_RUNTIME 1
#endif
#endif
#ifndef KBENCH_SANITIZER_RUNTIME
#define KBENCH_SANITIZER_RUNTIME 0
#endif

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
