// Attack: a C++20 header-unit import, import "file"; (no '#'): a module
// import reads the named header. Under --std=c++17 it is plain tokens, but a
// later -std=c++20 must not turn it into a read.
// clang-format off
import "@CANARY_FILE@";
export import </etc/passwd>;
// @kb launch gather_linear grid(B) block(32)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out,
                                         int R, int B, int H, int K) { out[0] = 1; }
