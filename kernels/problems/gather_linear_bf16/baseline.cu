// The baseline's own kernel: torch.cat of the R bf16 shards along the last dim,
// gathered[b][r*H + h] = x[r][b][h], into a workspace that the matmul step
// reads.
// @kb workspace gathered bytes(B * R * H * 2)
// @kb launch concat grid(cdiv(B * R * H, 256)) block(256) args(x, gathered, R, B, H)
extern "C" __global__ void concat(const unsigned short* x,
                                  unsigned short* gathered, int R, int B,
                                  int H) {
  const long long rh = static_cast<long long>(R) * H;
  const long long n = B * rh;
  for (long long i =
           blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
       i < n; i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long b = i / rh, j = i % rh;
    const long long r = j / H, h = j % H;
    gathered[i] = x[(r * B + b) * H + h];
  }
}
