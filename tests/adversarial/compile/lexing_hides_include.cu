// Attack: lexing tricks that make a filter and the compiler disagree on
// where a literal starts, so a spliced include hides from the filter: the
// pp-number 1'R before a quote (a raw string only to a filter that guesses
// the prefix from the letters before the quote), a digit separator before
// an extended character, and "\ <newline>", which GCC splices.
// clang-format off
__device__ int a = 1'R"x(
%:\
include "@CANARY_FILE@"
)x";
__device__ int b = 1'é'R"y(
#inc\
lude "/etc/passwd"
)y";
#inc\ 
lude "@CANARY_FILE@"
// @kb launch gather_linear grid(B) block(32)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out,
                                         int R, int B, int H, int K) { out[0] = a + b; }
