// Attack: the holdout secret, DATA_DIR/holdout.secret: with it a client can
// compute the hidden cases of every submission and pass them alone.
// clang-format off
__device__ int leak[] = {
%:include "@DATA_DIR@/holdout.secret"
};
// @kb launch gather_linear grid(B) block(32)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out,
                                         int R, int B, int H, int K) { out[0] = leak[0]; }
