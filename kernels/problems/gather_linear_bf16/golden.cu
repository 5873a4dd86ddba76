// The golden of gather_linear_bf16: every output in fp64, from fp64 copies
// of the bf16 inputs, one thread per output element. Not timed, but it decides
// the hidden cases, so it stays obviously correct: the loops are the
// statement's. Offsets are 64-bit: K*R*H exceeds 2^31 in the domain.
// @kb launch golden grid(B, cdiv(K, 128)) block(128)
extern "C" __global__ void golden(const double* x, const double* w,
                                  const double* bias, double* out, int R, int B,
                                  int H, int K) {
  const int b = blockIdx.x;
  const int k = blockIdx.y * blockDim.x + threadIdx.x;
  if (b >= B || k >= K) return;
  const long long rh = static_cast<long long>(R) * H;
  double acc = bias[k];
  for (int r = 0; r < R; ++r) {
    for (int h = 0; h < H; ++h) {
      acc += x[(static_cast<long long>(r) * B + b) * H + h] *
             w[k * rh + static_cast<long long>(r) * H + h];
    }
  }
  out[static_cast<long long>(b) * K + k] = acc;
}
