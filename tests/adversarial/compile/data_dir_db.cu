// Attack: kbd's SQLite store, DATA_DIR/kbench.db and its -wal: every
// client's kernel sources, results and sessions. The test first stores a
// victim kernel holding a secret comment; it must not come back.
// clang-format off
__device__ int leak[] = {
%:include "@DATA_DIR@/kbench.db"
};
#define STR(...) #__VA_ARGS__
static_assert(false, STR(
%:include "@DATA_DIR@/kbench.db-wal"
));
// @kb launch gather_linear grid(B) block(32)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out,
                                         int R, int B, int H, int K) { out[0] = leak[0]; }
