#include <../x.h>
#include MACRO
#embed "a"
#include_next <cuda_fp16.h>

#import <x>
