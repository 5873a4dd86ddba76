__global__ void c() {}
__global__ void p() {
  c<<<1, 1>>>();
  cudaDeviceSynchronize();
}
