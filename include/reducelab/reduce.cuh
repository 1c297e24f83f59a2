#pragma once
// reducelab::reduce for operations of your own (nvcc). Include this in the .cu file that calls
// reduce with a user functor; the built-in operations need only reducelab/reduce.hpp.
//
//   struct MaxAbs {
//     using value_type = float;
//     __host__ __device__ float identity() const { return 0.f; }
//     __host__ __device__ float operator()(float a, float b) const { return fmaxf(fabsf(a), fabsf(b)); }
//   };
//   reducelab::reduce(d_x, n, MaxAbs{}, d_out, stream);     // GPU
//   reducelab::cpu::reduce(h_x, n, MaxAbs{});               // CPU, the same order
//
// The operation must be associative and commutative (the order groups elements by thread, not
// by index) and value_type must be trivially copyable and at most 16 bytes.
#include "reducelab/detail/cpu_reduce.hpp"
#include "reducelab/detail/device_reduce.cuh"
#include "reducelab/reduce.hpp"
