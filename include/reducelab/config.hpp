#pragma once
// Qualifiers for code that both nvcc and the host compiler read. The SIMT backend compiles
// kernels with g++, where these qualifiers mean nothing.
#if defined(__CUDACC__)
#define RL_HD __host__ __device__
#define RL_HD_INLINE __host__ __device__ __forceinline__
#else
#define RL_HD
#define RL_HD_INLINE inline
#endif
