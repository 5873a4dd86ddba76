// Cheat: writes nothing, hoping the output buffer still holds the answer
// from an earlier run (the "AI CUDA Engineer" stale-memory case).
// Must get: failed, "NaN or unwritten" (outputs are poisoned with NaN
// before every run).
//
// @kb problem gather_linear_fp32
// @kb launch gather_linear grid(B, cdiv(K, 256)) block(256)

extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out, int R,
                                         int B, int H, int K) {}
