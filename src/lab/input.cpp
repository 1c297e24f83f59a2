#include "lab/input.hpp"

#include <algorithm>
#include <cstring>
#include <thread>

namespace rl::lab {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

namespace {

template <class T>
void fill(T* out, std::size_t begin, std::size_t end, std::uint64_t seed) {
  const std::uint64_t base = splitmix64(seed);
  for (std::size_t i = begin; i < end; ++i) out[i] = static_cast<T>(splitmix64(base + i) & 0xFF);
}

}  // namespace

HostArray make_input(Dtype dtype, std::size_t n, std::uint64_t seed) {
  HostArray a;
  a.dtype = dtype;
  a.n = n;
  a.element_bytes = core::size_of(dtype);
  a.bytes.resize(n * a.element_bytes);
  core::with_gallery_dtype(dtype, [&]<class T>() {
    parallel_for(0, n, [&](std::size_t b, std::size_t e) { fill(reinterpret_cast<T*>(a.bytes.data()), b, e, seed); });
  });
  return a;
}

std::vector<unsigned char> to_accumulator(const HostArray& in, Accumulate acc) {
  const Dtype to = gallery::accumulator_dtype(in.dtype, acc);
  if (to == in.dtype) return in.bytes;
  std::vector<unsigned char> out(in.n * core::size_of(to));
  core::with_gallery_dtype(in.dtype, [&]<class T>() {
    core::with_dtype(to, [&]<class A>() {
      if constexpr (std::is_arithmetic_v<A>) {
        auto* dst = reinterpret_cast<A*>(out.data());
        const T* src = in.as<T>();
        parallel_for(0, in.n, [&](std::size_t b, std::size_t e) { std::copy(src + b, src + e, dst + b); });
      }
    });
  });
  return out;
}

}  // namespace rl::lab
