// Reads only its own shard, and writes it into both halves of out: the
// kernel that must fail once the runner runs every rank (docs/multi-gpu.md).
// @kb problem allgather_fp32
// @kb launch allgather_own_shard grid(cdiv(N, 256)) block(256)
extern "C" __global__ void allgather_own_shard(const float* x, float* out,
                                               int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= N) return;
  out[i] = x[i];
  out[N + i] = x[i];
}
