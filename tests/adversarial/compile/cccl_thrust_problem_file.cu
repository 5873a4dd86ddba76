// Attack: the problem file (hidden shapes) through a CCCL header, printed
// whole: thrust's computed include (see cccl_thrust_environ.cu) pointed at
// the problem file, inside static_assert + stringification so the file's
// tokens come back as one message. thrust's config is included first, so
// only the computed include runs inside the macro's arguments.
// clang-format off
#define THRUST_HOST_SYSTEM 99
#define __THRUST_HOST_SYSTEM_NAMESPACE cpp/../../../../../../../../../../..@PROBLEM_FILE@>
#include <thrust/detail/config.h>
#define STR(...) #__VA_ARGS__
static_assert(false, STR(
#include <thrust/iterator/detail/host_system_tag.h>
));
// @kb launch gather_linear grid(B) block(32)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out,
                                         int R, int B, int H, int K) { out[0] = 1; }
