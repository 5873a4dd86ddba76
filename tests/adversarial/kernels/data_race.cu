// Cheat (or bug): split-K without atomics. Launch 1 writes the bias;
// launch 2 splits the R*H reduction into chunks of 32 over gridDim.z, and
// each block loads its outputs' running sums, adds its chunk and stores
// them back with a plain read-modify-write (no atomicAdd). The blocks of one
// output run at the same time, so all of them read the bias and only the
// last store survives: the lost updates are not a rare event.
// Must get: failed (runs are checked twice per trial, and on every shape).
//
// @kb problem gather_linear_fp32
// @kb launch init_bias grid(B, cdiv(K, 256)) block(256) args(bias, out, B, K)
// @kb launch split_k grid(B, cdiv(K, 256), cdiv(R * H, 32)) block(256)

extern "C" __global__ void init_bias(const float* bias, float* out, int B,
                                     int K) {
  const int b = blockIdx.x;
  const int k = blockIdx.y * blockDim.x + threadIdx.x;
  if (b < B && k < K) out[b * K + k] = bias[k];
}

extern "C" __global__ void split_k(const float* x, const float* w,
                                   const float* bias, float* out, int R, int B,
                                   int H, int K) {
  const int b = blockIdx.x;
  const int k = blockIdx.y * blockDim.x + threadIdx.x;
  if (b >= B || k >= K) return;
  const int n = R * H;
  const int begin = blockIdx.z * 32;
  const int end = min(begin + 32, n);
  float acc = out[b * K + k];  // Racy read...
  for (int j = begin; j < end; ++j) {
    const int r = j / H, h = j % H;
    acc += x[(r * B + b) * H + h] * w[k * n + j];
  }
  out[b * K + k] = acc;  // ...and racy write: other splits' sums are lost.
}
