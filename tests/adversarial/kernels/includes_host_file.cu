// Cheat: exfiltration. #includes a host file, so that the compiler's
// diagnostics (which quote the offending line) echo its contents back to the
// caller or into the server's logs.
// Must get: rejected, "include"; the file must be neither read nor echoed:
// "root:" appears in no response and no kbd or kbworker log.
//
// @kb problem gather_linear_fp32
// @kb launch gather_linear grid(B, cdiv(K, 256)) block(256)

#include "/etc/passwd"

extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out, int R,
                                         int B, int H, int K) {}
