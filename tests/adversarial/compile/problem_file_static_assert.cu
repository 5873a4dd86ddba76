// Attack: static_assert + stringification around an include: the directive
// inside the macro's arguments is processed, and the whole file comes back
// as one string in one message. Used on the problem file, it prints the
// hidden holdout shapes.
// clang-format off
#define STR(...) #__VA_ARGS__
static_assert(false, STR(
%:include "@PROBLEM_FILE@"
));
// @kb launch gather_linear grid(B) block(32)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out,
                                         int R, int B, int H, int K) { out[0] = 1; }
