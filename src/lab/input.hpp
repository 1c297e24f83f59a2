#pragma once
// Inputs for the lab: seed 000's pattern, values rand() & 0xFF, reproducible by seed.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "gallery/registry.hpp"

namespace rl::lab {

using gallery::Accumulate;
using reducelab::Dtype;

// A host array of one dtype, stored as raw bytes.
struct HostArray {
  Dtype dtype = Dtype::int32;
  std::size_t n = 0;
  std::size_t element_bytes = 4;
  std::vector<unsigned char> bytes;
  template <class T>
  const T* as() const {
    return reinterpret_cast<const T*>(bytes.data());
  }
};

// Values in [0, 255] as the seed draws them (rand() & 0xFF), from a counter-based generator
// (splitmix64 of seed and index) so that any n is reproducible and generated in parallel.
HostArray make_input(Dtype dtype, std::size_t n, std::uint64_t seed);

// The buffer an in-place kernel reduces in holds the accumulator type: int32 data accumulated
// wide becomes int64. Other combinations return a copy of the input's bytes.
std::vector<unsigned char> to_accumulator(const HostArray& in, Accumulate acc);

}  // namespace rl::lab
