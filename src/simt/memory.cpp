// Device memory on the CPU: allocations registered so that a T* into one becomes a pointer
// bounded by it, and the `extern __shared__` buffer of the running block.
#include <cstdlib>
#include <map>
#include <shared_mutex>

#include "simt/scheduler.hpp"

namespace simt {

namespace {

std::shared_mutex g_regions_mutex;
std::map<std::uintptr_t, std::size_t> g_regions;  // base -> bytes

}  // namespace

void* device_malloc(std::size_t bytes) {
  // 256-byte alignment, as cudaMalloc; at least one byte so every allocation is distinct.
  const std::size_t rounded = (std::max<std::size_t>(bytes, 1) + 255) / 256 * 256;
  void* p = std::aligned_alloc(256, rounded);
  if (p == nullptr)
    throw KernelError("simt: device_malloc of " + std::to_string(bytes) + " bytes failed");
  std::unique_lock lock(g_regions_mutex);
  g_regions[reinterpret_cast<std::uintptr_t>(p)] = bytes;
  return p;
}

void device_free(void* p) {
  if (p == nullptr) return;
  {
    std::unique_lock lock(g_regions_mutex);
    auto it = g_regions.find(reinterpret_cast<std::uintptr_t>(p));
    if (it == g_regions.end())
      throw KernelError("simt: device_free of a pointer device_malloc did not return");
    g_regions.erase(it);
  }
  std::free(p);
}

namespace detail {

Region find_region(const void* p) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  std::shared_lock lock(g_regions_mutex);
  auto it = g_regions.upper_bound(a);
  if (it != g_regions.begin()) {
    --it;
    // One past the end still belongs to the allocation (p + n is a valid pointer).
    if (a <= it->first + it->second)
      return {reinterpret_cast<const std::byte*>(it->first), it->second};
  }
  return {nullptr, std::numeric_limits<std::size_t>::max()};
}

}  // namespace detail
}  // namespace simt
