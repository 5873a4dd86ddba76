__device__ int leak[] = { % : include "/proc/self/environ"};
