#pragma once
// Inputs for the lab: seed 000's pattern, values rand() & 0xFF, reproducible by seed.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <type_traits>
#include <vector>

#include "core/dtype.hpp"
#include "gallery/registry.hpp"
#include "reducelab/types.hpp"

namespace rl::lab {

using gallery::Accumulate;
using core::Dtype;

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

// The lab's one generator: a counter-based hash, so element i of any input is reproducible from
// (seed, i) alone and an input can be made in parallel.
std::uint64_t splitmix64(std::uint64_t x);

// Runs f(begin, end) over [begin, end), split across the host's cores when it is worth it.
template <class F>
void parallel_for(std::size_t begin, std::size_t end, F&& f) {
  const std::size_t n = end - begin;
  const std::size_t parts =
      std::min<std::size_t>(std::max(1u, std::thread::hardware_concurrency()), std::max<std::size_t>(1, n >> 16));
  if (parts <= 1) {
    f(begin, end);
    return;
  }
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < parts; ++t)
    pool.emplace_back([&, t] { f(begin + n * t / parts, begin + n * (t + 1) / parts); });
  for (auto& th : pool) th.join();
}

// Bench's random values of any of the library's element types, element i of input `seed`.
// 8- and 16-bit integers span their type; wider integers stay within 2^20 so sums stay
// readable; floats are uniform in [-1, 1); half and bfloat16 are random bit patterns of
// magnitude 2^-14 .. 1 (no zeros, infinities or NaNs).
template <class T>
T random_element(std::uint64_t seed, std::size_t i) {
  const std::uint64_t r = splitmix64(seed * 0x2545f4914f6cdd1dull + i);
  if constexpr (std::is_same_v<T, reducelab::half>) {
    const auto exp = static_cast<std::uint16_t>(1 + (r >> 11) % 14);
    return reducelab::half{static_cast<std::uint16_t>(((r >> 63) << 15) | (exp << 10) | (r & 0x3ff))};
  } else if constexpr (std::is_same_v<T, reducelab::bfloat16>) {
    const auto exp = static_cast<std::uint16_t>(113 + (r >> 11) % 14);
    return reducelab::bfloat16{static_cast<std::uint16_t>(((r >> 63) << 15) | (exp << 7) | (r & 0x7f))};
  } else if constexpr (std::is_same_v<T, float>) {
    return static_cast<float>(r >> 40) * 0x1p-23f - 1.0f;
  } else if constexpr (std::is_same_v<T, double>) {
    return static_cast<double>(r >> 11) * 0x1p-52 - 1.0;
  } else if constexpr (sizeof(T) <= 2) {
    return static_cast<T>(r);
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<T>(static_cast<std::int64_t>(r % (1u << 21)) - (1 << 20));
  } else {
    return static_cast<T>(r % (1u << 20));
  }
}

// n random elements (random_element), made across the host's cores.
template <class T>
std::vector<T> random_input(std::size_t n, std::uint64_t seed) {
  std::vector<T> in(n);
  parallel_for(0, n, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) in[i] = random_element<T>(seed, i);
  });
  return in;
}

// The gallery's input (a dtype it takes): values in [0, 255] as the seed draws them (rand() & 0xFF), from a counter-based generator
// (splitmix64 of seed and index) so that any n is reproducible and generated in parallel.
HostArray make_input(Dtype dtype, std::size_t n, std::uint64_t seed);

// The buffer an in-place kernel reduces in holds the accumulator type
// (gallery::accumulator_dtype): int32 data accumulated wide becomes int64. Other combinations return a copy of the input's bytes.
std::vector<unsigned char> to_accumulator(const HostArray& in, Accumulate acc);

}  // namespace rl::lab
