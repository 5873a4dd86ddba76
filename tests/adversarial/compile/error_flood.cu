// Attack: log flooding. A macro doubled 20 times expands to 2^20 copies of a
// word; stringified into a static_assert message it is a multi-MB message,
// and hundreds of #warning/#error lines follow. The log, the response and
// the store row must stay bounded.
// clang-format off
#define X1(x) x x
#define X2(x) X1(X1(x))
#define X4(x) X2(X2(x))
#define X8(x) X4(X4(x))
#define X16(x) X8(X8(x))
#define X20(x) X4(X16(x))
#define STR_(...) #__VA_ARGS__
#define STR(...) STR_(__VA_ARGS__)
static_assert(false, STR(X20(flood)));
#define E(n) static_assert(false, STR(X16(n)));
E(a) E(b) E(c) E(d) E(e) E(f) E(g) E(h) E(i) E(j) E(k) E(l) E(m) E(n)
#warning flood flood flood flood flood flood flood flood flood flood flood
#error flood flood flood flood flood flood flood flood flood flood flood
// @kb launch gather_linear grid(B) block(32)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out,
                                         int R, int B, int H, int K) { out[0] = 1; }
