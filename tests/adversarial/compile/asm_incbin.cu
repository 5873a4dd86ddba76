// Attack: assembler-level includes. GNU as has .incbin and .include; PTX has
// neither, but the text goes to ptxas verbatim, so ptxas must not read the
// file either (and its error must not echo it).
// clang-format off
__device__ void f() {
  asm volatile(".incbin \"/etc/passwd\"");
  asm volatile(".include \"@CANARY_FILE@\"");
}
// @kb launch gather_linear grid(B) block(32)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out,
                                         int R, int B, int H, int K) { f(); out[0] = 1; }
