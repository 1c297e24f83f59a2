#pragma once
// The one CUDA error check of the lab, the gallery and the SIMT layer's CUDA half: every CUDA
// runtime call goes through RL_CUDA_CHECK, which throws rl::CudaError with the call, its
// file:line and the runtime's name and text for the error. Host C++: plain .cpp files that
// include <cuda_runtime.h> use it as well as .cu files (simt/portable.cuh includes it under nvcc).
// The library (include/reducelab) returns a Status instead and does not use it.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace rl {

// Thrown by RL_CUDA_CHECK and rl::launch; tools catch it at the edge.
class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws CudaError("<what> failed: <name> (<text>)") unless err is cudaSuccess.
inline void check_cuda(cudaError_t err, const char* what) {
  if (err != cudaSuccess)
    throw CudaError(std::string(what) + " failed: " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
}

}  // namespace rl

#define RL_CUDA_CHECK_STR2_(x) #x
#define RL_CUDA_CHECK_STR_(x) RL_CUDA_CHECK_STR2_(x)
#define RL_CUDA_CHECK(call) ::rl::check_cuda((call), __FILE__ ":" RL_CUDA_CHECK_STR_(__LINE__) ": " #call)
