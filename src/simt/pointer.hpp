#pragma once
// Checked pointers: what rl::gmem / rl::smem / rl::vmem are on the SIMT backend.
//
// A simt::ptr<T> is a T* that knows the region it points into (a device allocation or a
// __shared__ array) and its memory space. Every access through it is bounds-checked (always),
// and, while race checks or an access observer are on, recorded. `p[i]` yields a simt::ref<T>:
// converting it to T reads, assigning writes. Global memory is read and written through
// std::atomic_ref, relaxed: blocks run concurrently on OS threads, and a racy kernel must be a
// wrong answer or a report, never C++ undefined behaviour.
#include <atomic>
#include <compare>
#include <concepts>
#include <cstring>
#include <limits>
#include <type_traits>

#include "simt/core.hpp"

namespace simt {

// ---- device memory ---------------------------------------------------------------------------
// Registered allocations: a T* into one of them converts to a ptr<T> bounded by it.
void* device_malloc(std::size_t bytes);  // 256-byte aligned, contents undefined (as cudaMalloc)
void device_free(void* p);               // nullptr is ignored; unknown pointers are an error

namespace detail {

struct Region {
  const std::byte* base = nullptr;
  std::size_t bytes = 0;
};
// The allocation holding p, or {nullptr, SIZE_MAX} (unbounded) when p is not device memory.
Region find_region(const void* p);

// Slow paths, out of line so the fast path stays a compare and a branch.
[[noreturn]] void out_of_bounds(const void* addr, std::size_t bytes, const std::byte* base,
                                std::size_t region_bytes, std::size_t elem_bytes, Space space,
                                AccessKind kind, const std::source_location& loc);
void record_access(const void* addr, std::size_t bytes, const std::byte* base, Space space,
                   AccessKind kind, const std::source_location& loc);

// A check `off + bytes <= region` that cannot wrap: an address below base is a huge offset.
inline bool in_region(const void* addr, std::size_t bytes, const std::byte* base,
                      std::size_t region_bytes) {
  const std::size_t off = reinterpret_cast<std::uintptr_t>(addr) -
                          reinterpret_cast<std::uintptr_t>(base);
  return region_bytes >= bytes && off <= region_bytes - bytes;
}

inline void check_access(const void* addr, std::size_t bytes, const std::byte* base,
                         std::size_t region_bytes, std::size_t elem_bytes, Space space,
                         AccessKind kind, const std::source_location& loc) {
  if (!in_region(addr, bytes, base, region_bytes)) [[unlikely]]
    out_of_bounds(addr, bytes, base, region_bytes, elem_bytes, space, kind, loc);
  if (g_track_accesses) [[unlikely]]
    record_access(addr, bytes, base, space, kind, loc);
}

// Scalars up to 8 bytes go through atomic_ref (plain moves on x86); anything else is copied.
template <class T>
inline constexpr bool atomic_capable =
    std::is_trivially_copyable_v<T> && (sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 ||
                                        sizeof(T) == 8) &&
    alignof(T) >= sizeof(T);

template <class T>
inline T load(const T* p) {
  if constexpr (atomic_capable<T>)
    return std::atomic_ref<T>(*const_cast<T*>(p)).load(std::memory_order_relaxed);
  else
    return *p;
}
template <class T>
inline void store(T* p, const T& v) {
  if constexpr (atomic_capable<T>)
    std::atomic_ref<T>(*p).store(v, std::memory_order_relaxed);
  else
    *p = v;
}

}  // namespace detail

template <class T>
class ptr;

// The result of p[i]: a read when converted to T, a write when assigned.
template <class T>
class ref {
 public:
  using value_type = std::remove_const_t<T>;

  ref(T* addr, const std::byte* base, std::size_t bytes, Space space, std::source_location loc)
      : addr_(addr), base_(base), bytes_(bytes), space_(space), loc_(loc) {}
  ref(const ref&) = default;

  value_type read() const {
    detail::check_access(addr_, sizeof(T), base_, bytes_, sizeof(T), space_, AccessKind::read,
                         loc_);
    return detail::load(addr_);
  }
  operator value_type() const { return read(); }

  // A proxy's assignment writes the value; it never rebinds.
  const ref& operator=(const value_type& v) const
    requires(!std::is_const_v<T>)
  {
    write(v);
    return *this;
  }
  const ref& operator=(const ref& o) const
    requires(!std::is_const_v<T>)
  {
    write(o.read());
    return *this;
  }
  template <class U>
  const ref& operator=(const ref<U>& o) const
    requires(!std::is_const_v<T>)
  {
    write(static_cast<value_type>(o.read()));
    return *this;
  }

#define SIMT_REF_COMPOUND(op)                                                 \
  const ref& operator op##=(const value_type& v) const                        \
    requires(!std::is_const_v<T>) && requires(value_type a) { a op## = v; } \
  {                                                                           \
    value_type x = read();                                                    \
    x op## = v;                                                               \
    write(x);                                                                 \
    return *this;                                                             \
  }
  SIMT_REF_COMPOUND(+)
  SIMT_REF_COMPOUND(-)
  SIMT_REF_COMPOUND(*)
  SIMT_REF_COMPOUND(/)
  SIMT_REF_COMPOUND(%)
  SIMT_REF_COMPOUND(|)
  SIMT_REF_COMPOUND(&)
  SIMT_REF_COMPOUND(^)
  SIMT_REF_COMPOUND(<<)
  SIMT_REF_COMPOUND(>>)
#undef SIMT_REF_COMPOUND

  const ref& operator++() const requires(!std::is_const_v<T>) { return *this += value_type(1); }
  const ref& operator--() const requires(!std::is_const_v<T>) { return *this -= value_type(1); }
  value_type operator++(int) const requires(!std::is_const_v<T>) {
    value_type old = read();
    write(old + value_type(1));
    return old;
  }
  value_type operator--(int) const requires(!std::is_const_v<T>) {
    value_type old = read();
    write(old - value_type(1));
    return old;
  }

  // &p[i] is a checked pointer again (forming it is not an access).
  ptr<T> operator&() const;

  // Member access of struct elements (p[i].field): no per-field check beyond the element's.
  T* operator->() const {
    detail::check_access(addr_, sizeof(T), base_, bytes_, sizeof(T), space_, AccessKind::read,
                         loc_);
    return addr_;
  }

  T* address() const { return addr_; }
  Space space() const { return space_; }
  const std::source_location& where() const { return loc_; }

 private:
  void write(const value_type& v) const {
    detail::check_access(addr_, sizeof(T), base_, bytes_, sizeof(T), space_, AccessKind::write,
                         loc_);
    detail::store(addr_, v);
  }

  T* addr_;
  const std::byte* base_;
  std::size_t bytes_;
  Space space_;
  std::source_location loc_;
};

// An index that remembers where it was written, so p[i] can name its file:line in reports.
// (operator[] takes one argument; a converting constructor's default argument is evaluated at
// the subscript.)
struct Index {
  std::ptrdiff_t value;
  std::source_location loc;
  template <std::integral I>
  constexpr Index(I i, std::source_location l = std::source_location::current())
      : value(static_cast<std::ptrdiff_t>(i)), loc(l) {}
  template <std::integral I>
  Index(const ref<I>& i, std::source_location l = std::source_location::current())
      : value(static_cast<std::ptrdiff_t>(i.read())), loc(l) {}
};

template <class T>
class ptr {
 public:
  using element_type = T;

  ptr() = default;
  ptr(std::nullptr_t) {}
  // A raw pointer: bounded by the device allocation holding it, unbounded when unknown.
  // (A template so that a __shared__ array takes the array constructor, not this one.)
  template <class P>
    requires(std::is_convertible_v<P, T*> && !std::is_array_v<std::remove_reference_t<P>> &&
             !std::is_same_v<std::remove_cvref_t<P>, std::nullptr_t>)
  ptr(P&& raw) : p_(raw) {
    T* p = p_;
    if (p != nullptr) {
      detail::Region r = detail::find_region(p);
      base_ = r.base;
      bytes_ = r.bytes;
    }
  }
  // A __shared__ array: bounded by the array.
  template <std::size_t N>
  ptr(T (&array)[N])
      : p_(array), base_(reinterpret_cast<const std::byte*>(array)), bytes_(N * sizeof(T)),
        space_(Space::shared) {}
  template <std::size_t N>
    requires std::is_const_v<T>
  ptr(std::remove_const_t<T> (&array)[N])
      : p_(array), base_(reinterpret_cast<const std::byte*>(array)), bytes_(N * sizeof(T)),
        space_(Space::shared) {}
  // ptr<T> -> ptr<const T>
  template <class U>
    requires(std::is_same_v<const U, T> && !std::is_same_v<U, T>)
  ptr(const ptr<U>& o) : p_(o.get()), base_(o.region_base()), bytes_(o.region_bytes()),
                         space_(o.space()) {}
  // Everything explicit: used by the runtime (dynamic shared memory, &p[i]).
  ptr(T* p, const std::byte* base, std::size_t bytes, Space space)
      : p_(p), base_(base), bytes_(bytes), space_(space) {}

  T* get() const { return p_; }
  const std::byte* region_base() const { return base_; }
  std::size_t region_bytes() const { return bytes_; }
  Space space() const { return space_; }
  explicit operator bool() const { return p_ != nullptr; }

  ref<T> operator[](Index i) const {
    return ref<T>(p_ + i.value, base_, bytes_, space_, i.loc);
  }
  ref<T> operator*() const { return ref<T>(p_, base_, bytes_, space_, {}); }
  T* operator->() const {
    detail::check_access(p_, sizeof(T), base_, bytes_, sizeof(T), space_, AccessKind::read, {});
    return p_;
  }

  template <std::integral I>
  ptr operator+(I n) const { return with(p_ + static_cast<std::ptrdiff_t>(n)); }
  template <std::integral I>
  ptr operator-(I n) const { return with(p_ - static_cast<std::ptrdiff_t>(n)); }
  template <std::integral I>
  friend ptr operator+(I n, const ptr& q) { return q + n; }
  template <std::integral I>
  ptr& operator+=(I n) { p_ += static_cast<std::ptrdiff_t>(n); return *this; }
  template <std::integral I>
  ptr& operator-=(I n) { p_ -= static_cast<std::ptrdiff_t>(n); return *this; }
  ptr& operator++() { ++p_; return *this; }
  ptr& operator--() { --p_; return *this; }
  ptr operator++(int) { ptr old = *this; ++p_; return old; }
  ptr operator--(int) { ptr old = *this; --p_; return old; }

  std::ptrdiff_t operator-(const ptr& o) const { return p_ - o.p_; }
  friend bool operator==(const ptr& a, const ptr& b) { return a.p_ == b.p_; }
  friend auto operator<=>(const ptr& a, const ptr& b) { return a.p_ <=> b.p_; }
  friend bool operator==(const ptr& a, std::nullptr_t) { return a.p_ == nullptr; }

 private:
  ptr with(T* p) const { return ptr(p, base_, bytes_, space_); }

  T* p_ = nullptr;
  const std::byte* base_ = nullptr;  // null region: every access is out of bounds
  std::size_t bytes_ = 0;
  Space space_ = Space::global;
};

template <class T>
ptr<T> ref<T>::operator&() const {
  return ptr<T>(addr_, base_, bytes_, space_);
}

namespace detail {
struct DynamicShared {
  std::byte* data;
  std::size_t bytes;
};
DynamicShared dynamic_shared_now();  // the current block's `extern __shared__` buffer
}  // namespace detail

// The launch's dynamic shared memory (LaunchConfig::shared_bytes), 16-byte aligned.
template <class T>
ptr<T> dynamic_shared() {
  detail::DynamicShared d = detail::dynamic_shared_now();
  return ptr<T>(reinterpret_cast<T*>(d.data), d.data, d.bytes, Space::shared);
}

}  // namespace simt
