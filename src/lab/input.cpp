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
  a.element_bytes = reducelab::size_of(dtype);
  a.bytes.resize(n * a.element_bytes);
  parallel_for(0, n, [&](std::size_t b, std::size_t e) {
    switch (dtype) {
      case Dtype::int32: fill(reinterpret_cast<int*>(a.bytes.data()), b, e, seed); break;
      case Dtype::float32: fill(reinterpret_cast<float*>(a.bytes.data()), b, e, seed); break;
      case Dtype::float64: fill(reinterpret_cast<double*>(a.bytes.data()), b, e, seed); break;
    }
  });
  return a;
}

std::vector<unsigned char> to_accumulator(const HostArray& in, Accumulate acc) {
  if (in.dtype != Dtype::int32 || acc == Accumulate::wrap) return in.bytes;
  std::vector<unsigned char> out(in.n * sizeof(long long));
  auto* dst = reinterpret_cast<long long*>(out.data());
  const int* src = in.as<int>();
  parallel_for(0, in.n, [&](std::size_t b, std::size_t e) { std::copy(src + b, src + e, dst + b); });
  return out;
}

}  // namespace rl::lab
