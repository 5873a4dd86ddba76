// Cheat (denial of service): exponential template instantiation. Each
// Bomb<N, M> instantiates two distinct Bomb<N - 1, ...>, so Bomb<30, 0>
// asks for 2^31 - 1 class instantiations (depth only 30, well inside the
// template depth limit): NVRTC would run for hours and eat all memory.
// Must get: rejected, "compile" and "limit" (NVRTC runs in a child with CPU
// time and memory limits), and the server must go on compiling.
//
// @kb problem gather_linear_fp32
// @kb launch gather_linear grid(B, cdiv(K, 256)) block(256)

template <int N, int M>
struct Bomb {
  static constexpr long long value =
      Bomb<N - 1, 2 * M>::value + Bomb<N - 1, 2 * M + 1>::value;
};
template <int M>
struct Bomb<0, M> {
  static constexpr long long value = M;
};

extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out, int R,
                                         int B, int H, int K) {
  out[0] = static_cast<float>(Bomb<30, 0>::value);
}
