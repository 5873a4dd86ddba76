// Cheat (or bug): never returns. Spins on a device global read through a
// volatile pointer, which nothing ever sets, so the compiler can neither
// prove the loop finite nor drop it.
// Must get: timed_out (the watchdog kills the runner at the job's budget),
// and the worker must go on serving.
//
// @kb problem gather_linear_fp32
// @kb launch gather_linear grid(B, cdiv(K, 256)) block(256)

__device__ int stop = 0;

extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out, int R,
                                         int B, int H, int K) {
  const volatile int* flag = &stop;
  while (true) {
    if (*flag) break;
  }
  out[0] = 0.f;
}
