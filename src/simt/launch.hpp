#pragma once
// Launching kernels on the SIMT runtime: synchronous host launches and CUDA 13 tail launches.
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "simt/core.hpp"

namespace simt {

struct LaunchConfig {
  dim3 grid;
  dim3 block;
  std::size_t shared_bytes = 0;  // dynamic (`extern __shared__`) bytes per block
  void* stream = nullptr;        // ignored: every launch is synchronous
  const char* name = "kernel";   // what errors and reports call the kernel
  bool helper = false;           // bookkeeping (a final pass), not the kernel a caller asked for
};

namespace detail {

// A grid to run: the kernel with its arguments already converted to its parameter types.
struct GridTask {
  std::string name;
  dim3 grid, block;
  std::size_t shared_bytes = 0;
  void (*invoke)(const void* closure) = nullptr;  // calls the kernel once, as one thread
  std::shared_ptr<const void> closure;
};

template <class... P>
struct Closure {
  void (*kernel)(P...);
  std::tuple<std::decay_t<P>...> args;
};

template <class... P>
void invoke_closure(const void* c) {
  const auto* closure = static_cast<const Closure<P...>*>(c);
  std::apply(closure->kernel, closure->args);  // each thread gets its own copy of the args
}

template <class... P, class... A>
GridTask make_task(const char* name, void (*kernel)(P...), dim3 grid, dim3 block,
                   std::size_t shared_bytes, A&&... args) {
  static_assert(sizeof...(P) == sizeof...(A), "wrong number of kernel arguments");
  auto closure = std::make_shared<Closure<P...>>(Closure<P...>{
      kernel, std::tuple<std::decay_t<P>...>(static_cast<std::decay_t<P>>(std::forward<A>(args))...)});
  return GridTask{name ? name : "kernel", grid, block, shared_bytes, &invoke_closure<P...>,
                  std::move(closure)};
}

void run_launch(GridTask task);   // host side: validate, run the grid and its tails, or throw
void queue_tail(GridTask task);   // device side: run after the current grid

}  // namespace detail

// Runs the grid and every tail launch it queues; returns when all are done. Throws
// KernelError on an invalid configuration or a fatal check. One launch runs at a time (a
// second host thread waits); launching from inside a kernel is an error (use tail_launch).
template <class... P, class... A>
void launch(void (*kernel)(P...), const LaunchConfig& cfg, A&&... args) {
  detail::run_launch(detail::make_task(cfg.name, kernel, cfg.grid, cfg.block, cfg.shared_bytes,
                                       std::forward<A>(args)...));
}

// From inside a kernel: run `kernel` after the current grid (and the tail launches queued
// before it) has finished, before launch() returns. Tail grids of a tail grid run right after
// it (depth first), which is the order a recursive (nested) reduction needs.
template <class... P, class... A>
void tail_launch(const char* name, void (*kernel)(P...), dim3 grid, dim3 block, A&&... args) {
  detail::queue_tail(detail::make_task(name, kernel, grid, block, 0, std::forward<A>(args)...));
}

}  // namespace simt
