// Seed 002 (002_01fa9b2a59f3b551.txt §3.3, dynamic parallelism): nestedHelloWorld, fixed for
// CUDA 13.
//
//   nested_hello [threads]   (default 8, as in the seed's output: a parent grid of 1 block of 8)
//
// Each level prints from every thread; thread 0 launches a child grid of half as many threads
// until one thread is left. What changed from the seed:
//   - the printf calls had a missing comma and a format/argument mismatch ("block td" with no
//     %d for blockIdx.x); they now print thread and block;
//   - the function body lacked its closing brace;
//   - `-arch=sm35` no longer exists: CMake builds for CMAKE_CUDA_ARCHITECTURES (sm_90), with
//     -rdc=true (CUDA_SEPARABLE_COMPILATION) and cudadevrt, as dynamic parallelism requires;
//   - CUDA 13's dynamic parallelism (CDP2) has no device-side cudaDeviceSynchronize: the parent
//     never waits for its child. The child is a tail launch, so it starts after the whole parent
//     grid has finished and the output keeps the seed's order (depth 0, then 1, 2, ...); the host
//     waits for the whole tree with one cudaDeviceSynchronize.
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

__global__ void nestedHelloWorld(int const iSize, int iDepth) {
  const unsigned tid = threadIdx.x;
  printf("Recursion=%d: Hello World from thread %u block %u\n", iDepth, tid, blockIdx.x);
  // condition to stop recursive execution
  if (iSize == 1) return;
  // reduce block size to half
  const int nthreads = iSize >> 1;
  // thread 0 of block 0 launches the child grid (one per level, after this grid: tail launch)
  if (tid == 0 && blockIdx.x == 0 && nthreads > 0) {
    ++iDepth;
    nestedHelloWorld<<<1, nthreads, 0, cudaStreamTailLaunch>>>(nthreads, iDepth);
    printf("-------> nested execution depth: %d\n", iDepth);
  }
}

static int check(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return 0;
  std::fprintf(stderr, "nested_hello: %s failed: %s (%s)\n", what, cudaGetErrorName(err),
               cudaGetErrorString(err));
  return 1;
}

int main(int argc, char** argv) {
  int threads = 8;
  if (argc > 1) threads = std::atoi(argv[1]);
  if (threads < 1 || threads > 1024) {
    std::fprintf(stderr, "nested_hello: threads must be 1..1024, got %s\n", argv[1]);
    return 2;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "nested_hello: no CUDA device; this example runs on a GPU only\n");
    return 1;
  }
  std::printf("Execution configuration: grid 1 block %d\n", threads);
  nestedHelloWorld<<<1, threads>>>(threads, 0);
  if (check(cudaGetLastError(), "launch")) return 1;
  if (check(cudaDeviceSynchronize(), "cudaDeviceSynchronize")) return 1;
  return 0;
}
