// Attack: whitespace and comments between '#' and the directive name, and
// tabs, a vertical tab and a form feed before '#' (the test's copy has
// those bytes where this file has @VT@ and @FF@): "#  include",
// "# /**/ include", "\v#include".
// clang-format off
__device__ int leak[] = {
#  include "@CANARY_FILE@"
# /* hide */ include "/etc/passwd"
	 #	include "/etc/passwd"
@VT@#include "/etc/passwd"
@FF@%:include "/etc/passwd"
};
// @kb launch gather_linear grid(B) block(32)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out,
                                         int R, int B, int H, int K) { out[0] = leak[0]; }
