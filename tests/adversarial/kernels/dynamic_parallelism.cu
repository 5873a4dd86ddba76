// Cheat: dynamic parallelism. The entry point launches a child kernel from
// device code, which needs relocatable device code (-rdc) and the device
// runtime; child grids escape the launch plan (and the timed stream's
// events).
// Must get: rejected, "dynamic parallelism" or "relocatable".
//
// @kb problem gather_linear_fp32
// @kb launch gather_linear grid(1) block(1)

extern "C" __global__ void child(const float* x, const float* w,
                                 const float* bias, float* out, int R, int B,
                                 int H, int K) {
  const int b = blockIdx.x;
  const int k = blockIdx.y * blockDim.x + threadIdx.x;
  if (b >= B || k >= K) return;
  float acc = bias[k];
  for (int r = 0; r < R; ++r)
    for (int h = 0; h < H; ++h)
      acc += x[(r * B + b) * H + h] * w[k * (R * H) + r * H + h];
  out[b * K + k] = acc;
}

extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out, int R,
                                         int B, int H, int K) {
  child<<<dim3(B, (K + 255) / 256), 256>>>(x, w, bias, out, R, B, H, K);
}
