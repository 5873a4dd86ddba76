// Attack: includes relative to the source's own name. The test sends this
// file with the request's filename set to a path in the canary's directory
// (sandbox and gRPC), so a quoted include looked up "beside the source"
// finds canary.txt (what --no-source-include turns off); #line moves the
// presumed file there too; and %:include __FILE__ names the main file.
// clang-format off
__device__ int leak[] = {
%:include "canary.txt"
#line 9 "@CANARY_DIR@/kernel.cu"
%:include "canary.txt"
%:include __FILE__
};
// @kb launch gather_linear grid(B) block(32)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out,
                                         int R, int B, int H, int K) { out[0] = leak[0]; }
