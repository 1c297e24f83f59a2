// `reducelab demos` on the GPU: each seed 002 demo timed with CUDA events (median of repeats,
// one warm-up first) at the seed's size, and its output checked.
#include <algorithm>
#include <vector>

#include "gallery/demos.cuh"
#include "lab/demos.hpp"
#include "lab/measure.hpp"

namespace rl::lab {

void time_demo_on_gpu(DemoRow& row, const DemoOptions& o, Device& gpu) {
  const auto stream = static_cast<cudaStream_t>(gpu.stream());
  std::vector<double> times;
  if (!row.math) {
    const unsigned bx = row.block_x, by = row.block_y;
    const unsigned nx = o.matrix_gpu, ny = o.matrix_gpu;
    const std::size_t elems = static_cast<std::size_t>(nx) * ny, bytes = elems * sizeof(float);
    std::vector<float> a(elems), b(elems), c(elems);
    for (std::size_t i = 0; i < elems; ++i) {
      a[i] = gallery::matrix_a(i);
      b[i] = gallery::matrix_b(i);
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
    const gallery::MathDemo which = *row.math;
    const std::size_t n = o.math_n_gpu, bytes = n * sizeof(float);
    Buffer dc(gpu, bytes);
    auto launch = [&] { gallery::launch_math_demo(which, static_cast<float*>(dc.get()), n, o.math_block, stream); };
    gpu.fill(dc.get(), 0xFF, bytes);
    launch();
    gpu.synchronize();
    std::vector<float> c(n);
    gpu.download(c.data(), dc.get(), bytes);
    row.gpu_ok = true;
    for (std::size_t i = 0; i < n && row.gpu_ok; ++i) row.gpu_ok = c[i] == gallery::math_value(i, which);
    for (int r = 0; r < o.repeats; ++r) times.push_back(time_ms_per_call(gpu, TimingMode::cold, launch));
    row.gpu_size = n;
  }
  const TimeStats t = time_stats(std::move(times));
  row.ms_median = t.median;
  row.ms_min = t.min;
  row.ms_max = t.max;
}

}  // namespace rl::lab
