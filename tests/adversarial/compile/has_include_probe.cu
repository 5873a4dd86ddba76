// Attack: __has_include as a file-existence oracle, spelled so a text
// filter does not see it (pasted from pieces) and with a macro operand, so
// it reaches the compiler. If the probe finds the canary, an error names an
// identifier pasted from pieces (kbleak + _present), which the test treats
// as a leak.
// clang-format off
#define CAT(a, b) a##b
#define HAS CAT(__has_, include)
#define CANARY "@CANARY_FILE@"
#if HAS(CANARY)
__device__ int probe = CAT(kbleak, _present);
#else
static_assert(false, "probe: not found");
#endif
// @kb launch gather_linear grid(B) block(32)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out,
                                         int R, int B, int H, int K) { out[0] = 1; }
