#inc\
lude < cuda_fp16.h>
/**/ #/**/ include <mma.h> ? ? = define T 1
