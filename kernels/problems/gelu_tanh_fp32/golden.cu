// The golden of gelu_tanh_fp32: every output in fp64, from fp64 copies of
// the inputs (the problem's signature, every tensor as double). One thread
// per element, the formula as written. Near x = -6, 1 + tanh(u) cancels to
// about 1e-11 with an absolute error of about 1e-16: far inside atol.
// @kb launch golden grid(cdiv(N, 256)) block(256)
extern "C" __global__ void golden(const double* x, double* y, int N) {
  const long long i =
      static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= N) return;
  const double kSqrt2OverPi = 0.79788456080286535588;  // sqrt(2 / pi)
  const double v = x[i];
  y[i] = 0.5 * v * (1.0 + tanh(kSqrt2OverPi * (v + 0.044715 * v * v * v)));
}
