// The baseline's kernels for moe_dispatch_grouped_linear_fp32. With the
// problem's batched matmul they stand for PyTorch eager on one GPU:
//   pos = (F.one_hot(expert, E).cumsum(0) - 1).gather(1, expert[:, None])
//   keep = pos[:, 0] < C                                  # assign_slots
//   disp = x.new_zeros(E, C, H)
//   disp[expert[keep], pos[keep, 0]] = x[keep]            # gather_rows
//   out = torch.bmm(disp, w.transpose(1, 2))              # cuBLASLt
// Eager runs the first two lines as several kernels; each group is one
// here, so the baseline is no slower than eager. Workspaces are
// torch.empty: assign_slots writes every slot, gather_rows every row.
// @kb workspace slot_token bytes(E * C * 4)
// @kb workspace disp bytes(E * C * H * 4)
// @kb launch assign_slots grid(E) block(1024) args(expert, slot_token, T, E, C)
// @kb launch gather_rows grid(C, E) block(256) args(x, slot_token, disp, T, H, E, C)

constexpr int kScanThreads = 1024;  // assign_slots' block; any size works.

// One block per expert e: slot_token[e][c] = the c-th token routed to e,
// or -1. Tokens are taken in chunks of the block, in order; an inclusive
// scan of the chunk's hits (Hillis-Steele, in shared memory) gives each
// hit its rank, so the slots are the same on every run.
extern "C" __global__ void assign_slots(const int* expert, int* slot_token,
                                        int T, int E, int C) {
  __shared__ int scan[kScanThreads];
  __shared__ int base;  // Tokens of e before the current chunk.
  const int e = blockIdx.x;
  const int i = threadIdx.x;
  if (i == 0) base = 0;
  __syncthreads();
  for (int start = 0; start < T && base < C; start += kScanThreads) {
    const int t = start + i;
    const int hit = t < T && expert[t] == e;
    scan[i] = hit;
    __syncthreads();
    for (int offset = 1; offset < kScanThreads; offset *= 2) {
      const int left = i >= offset ? scan[i - offset] : 0;
      __syncthreads();
      scan[i] += left;
      __syncthreads();
    }
    const int slot = base + scan[i] - 1;
    if (hit && slot < C) slot_token[static_cast<long long>(e) * C + slot] = t;
    __syncthreads();  // Every thread has read base before it moves on.
    if (i == kScanThreads - 1) base += scan[i];
    __syncthreads();
  }
  for (int c = base + i; c < C; c += kScanThreads) {
    slot_token[static_cast<long long>(e) * C + c] = -1;
  }
}

// One block per slot (c, e): copies its token's row of x into disp[e][c],
// or zeros for an empty slot.
extern "C" __global__ void gather_rows(const float* x, const int* slot_token,
                                       float* disp, int T, int H, int E,
                                       int C) {
  const int c = blockIdx.x;
  const int e = blockIdx.y;
  const long long slot = static_cast<long long>(e) * C + c;
  const int t = slot_token[slot];
  float* row = disp + slot * H;
  if (t < 0 || t >= T) {
    for (int h = threadIdx.x; h < H; h += blockDim.x) row[h] = 0.0f;
    return;
  }
  const float* src = x + static_cast<long long>(t) * H;
  for (int h = threadIdx.x; h < H; h += blockDim.x) row[h] = src[h];
}
