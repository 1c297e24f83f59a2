// `reducelab demos` on the GPU: each seed 002 demo timed with CUDA events (median of repeats,
// one warm-up first) at the seed's size, and its output checked.
#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "gallery/demos.cuh"
#include "lab/demos.hpp"
#include "lab/measure.hpp"

namespace rl::lab {
namespace {

gallery::MathDemo math_of(const std::string& id) {
  if (id == "lane-parity") return gallery::MathDemo::lane_parity;
  if (id == "warp-parity") return gallery::MathDemo::warp_parity;
  if (id == "select") return gallery::MathDemo::select;
  throw std::logic_error("demos: no math demo " + id);
}

}  // namespace

void time_demo_on_gpu(DemoRow& row, const DemoOptions& o, Device& gpu) {
  const auto stream = static_cast<cudaStream_t>(gpu.stream());
  std::vector<double> times;
  if (row.kernel == "sumMatrixOnGPU2D") {
    unsigned bx = 0, by = 0;
    if (std::sscanf(row.id.c_str(), "matrix-%ux%u", &bx, &by) != 2) throw std::logic_error("demos: bad id " + row.id);
    const unsigned nx = o.matrix_gpu, ny = o.matrix_gpu;
    const std::size_t elems = static_cast<std::size_t>(nx) * ny, bytes = elems * sizeof(float);
    std::vector<float> a(elems), b(elems), c(elems);
    for (std::size_t i = 0; i < elems; ++i) {
      a[i] = static_cast<float>(i % 251);
      b[i] = static_cast<float>(i % 13);
    }
    Buffer da(gpu, bytes), db(gpu, bytes), dc(gpu, bytes);
    gpu.upload(da.get(), a.data(), bytes);
    gpu.upload(db.get(), b.data(), bytes);
    auto launch = [&] {
      gallery::launch_sum_matrix(static_cast<const float*>(da.get()), static_cast<const float*>(db.get()),
                                 static_cast<float*>(dc.get()), nx, ny, bx, by, stream);
    };
    gpu.fill(dc.get(), 0xFF, bytes);
    launch();  // warm-up, checked below
    gpu.synchronize();
    gpu.download(c.data(), dc.get(), bytes);
    row.gpu_ok = true;
    for (std::size_t i = 0; i < elems && row.gpu_ok; ++i) row.gpu_ok = c[i] == a[i] + b[i];
    for (int r = 0; r < o.repeats; ++r) times.push_back(time_ms_per_call(gpu, TimingMode::cold, launch));
    row.gpu_size = nx;
  } else {
    const gallery::MathDemo which = math_of(row.id);
    const std::size_t n = o.math_n_gpu, bytes = n * sizeof(float);
    Buffer dc(gpu, bytes);
    auto launch = [&] { gallery::launch_math_demo(which, static_cast<float*>(dc.get()), n, o.math_block, stream); };
    gpu.fill(dc.get(), 0xFF, bytes);
    launch();
    gpu.synchronize();
    std::vector<float> c(n);
    gpu.download(c.data(), dc.get(), bytes);
    row.gpu_ok = true;
    for (std::size_t i = 0; i < n && row.gpu_ok; ++i) {
      const bool first = which == gallery::MathDemo::warp_parity ? (i / 32) % 2 == 0 : i % 2 == 0;
      row.gpu_ok = c[i] == (first ? 100.0f : 200.0f);
    }
    for (int r = 0; r < o.repeats; ++r) times.push_back(time_ms_per_call(gpu, TimingMode::cold, launch));
    row.gpu_size = n;
  }
  const TimeStats t = time_stats(std::move(times));
  row.ms_median = t.median;
  row.ms_min = t.min;
  row.ms_max = t.max;
}

}  // namespace rl::lab
