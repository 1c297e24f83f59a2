// `reducelab bench --gpus` in a build without CUDA: says so.
#include <cstdio>

#include "dist/bench_dist.hpp"

namespace reducelab::dist::bench {
int command(const Args&, std::ostream&) {
  std::fprintf(stderr, "reducelab: error: bench --gpus needs the CUDA backend with NCCL; this build has none\n");
  return 1;
}
}  // namespace reducelab::dist::bench
