#include "lab/demos.hpp"

#include <cstring>

#include "analysis/recorder.hpp"
#include "fmt/format.h"
#include "gallery/demos.cuh"
#include "lab/errors.hpp"

namespace rl::lab {
namespace {

using gallery::MathDemo;
using gallery::math_value;

struct MathCase {
  const char* id;
  const char* kernel;
  MathDemo which;
};
constexpr MathCase kMath[] = {{"lane-parity", "mathKernel1", MathDemo::lane_parity},
                              {"warp-parity", "mathKernel2", MathDemo::warp_parity},
                              {"select", "mathKernelSelect", MathDemo::select}};
struct Shape {
  unsigned x, y;
};
constexpr Shape kShapes[] = {{32, 32}, {32, 16}, {16, 32}, {16, 16}};

const analysis::StepCounts* step(const analysis::Counts& c, unsigned value) {
  for (const auto& s : c.steps)
    if (s.step == value) return &s;
  return nullptr;
}

DemoRow count_math(const MathCase& m, const DemoOptions& o) {
  DemoRow row;
  row.id = m.id;
  row.kernel = m.kernel;
  row.launch = fmt::format("block {}", o.math_block);
  row.math = m.which;
  row.block_x = o.math_block;
  row.block_y = 1;
  row.count_size = o.math_n_simt;
  const std::size_t n = o.math_n_simt;
  row.warps = (n + o.math_block - 1) / o.math_block * ((o.math_block + 31) / 32);
  float* c = static_cast<float*>(simt::device_malloc(n * sizeof(float)));
  analysis::Counts counts;
  try {
    analysis::Recorder recorder(o.math_block);
    gallery::launch_math_demo(m.which, c, n, o.math_block, nullptr);
    counts = recorder.counts();
    row.counts_ok = true;
    for (std::size_t i = 0; i < n && row.counts_ok; ++i) row.counts_ok = c[i] == math_value(i, m.which);
  } catch (...) {
    simt::device_free(c);
    throw;
  }
  simt::device_free(c);
  std::uint64_t lanes = 0, slots = 0;
  for (unsigned v : {gallery::kDemoIf, gallery::kDemoElse, gallery::kDemoSelect})
    if (const auto* s = step(counts, v)) {
      row.body_warp_executions += s->active_warps;
      lanes += s->active_threads;
      slots += s->lane_slots;
    }
  // A warp diverges at the branch when its if-side ran with some of its lanes, not all.
  if (const auto* s = step(counts, gallery::kDemoIf)) row.divergent_warps = s->divergent_warps;
  row.lane_utilization = slots ? static_cast<double>(lanes) / static_cast<double>(slots) : 0;
  return row;
}

DemoRow count_matrix(Shape b, const DemoOptions& o) {
  DemoRow row;
  row.id = fmt::format("matrix-{}x{}", b.x, b.y);
  row.kernel = "sumMatrixOnGPU2D";
  row.launch = fmt::format("block ({},{})", b.x, b.y);
  row.block_x = b.x;
  row.block_y = b.y;
  const unsigned nx = o.matrix_simt, ny = o.matrix_simt;
  row.count_size = nx;
  const std::size_t elems = static_cast<std::size_t>(nx) * ny;
  row.warps = static_cast<std::uint64_t>((nx + b.x - 1) / b.x) * ((ny + b.y - 1) / b.y) * ((b.x * b.y + 31) / 32);
  auto* a = static_cast<float*>(simt::device_malloc(elems * sizeof(float)));
  auto* bb = static_cast<float*>(simt::device_malloc(elems * sizeof(float)));
  auto* c = static_cast<float*>(simt::device_malloc(elems * sizeof(float)));
  analysis::Counts counts;
  try {
    for (std::size_t i = 0; i < elems; ++i) {
      a[i] = gallery::matrix_a(i);
      bb[i] = gallery::matrix_b(i);
    }
    analysis::Recorder recorder(b.x * b.y);
    gallery::launch_sum_matrix(a, bb, c, nx, ny, b.x, b.y, nullptr);
    counts = recorder.counts();
    row.counts_ok = true;
    for (std::size_t i = 0; i < elems && row.counts_ok; ++i) row.counts_ok = c[i] == a[i] + bb[i];
  } catch (...) {
    simt::device_free(a);
    simt::device_free(bb);
    simt::device_free(c);
    throw;
  }
  simt::device_free(a);
  simt::device_free(bb);
  simt::device_free(c);
  if (const auto* s = step(counts, gallery::kDemoLoad)) {
    row.body_warp_executions = s->active_warps;
    row.divergent_warps = s->divergent_warps;
    row.lane_utilization = s->simd_utilization;
    row.load_accesses = s->global_accesses;
    row.load_requests = s->global_requests;
    row.load_sectors = s->global_sectors;
    const double requested = 2.0 * sizeof(float) * static_cast<double>(s->active_threads);  // A[idx], B[idx]
    if (s->global_accesses) row.requests_per_access = static_cast<double>(s->global_requests) / s->global_accesses;
    if (s->global_requests) row.sectors_per_request = static_cast<double>(s->global_sectors) / s->global_requests;
    if (s->global_sectors) row.load_efficiency = requested / (32.0 * s->global_sectors);
    if (s->global_requests) row.line_efficiency = requested / (128.0 * s->global_requests);
  }
  return row;
}

}  // namespace

DemoReport run_demos(const DemoOptions& o, Device* gpu) {
  if (o.math_n_simt == 0 || o.math_n_gpu == 0) throw UsageError("demos: sizes must be at least 1");
  if (o.repeats < 1) throw UsageError(fmt::format("--repeats {}: give at least 1", o.repeats));
  DemoReport report;
  report.options = o;
  auto simt_device = open_simt_device();
  report.device = gpu ? gpu->info() : simt_device->info();
  if (!gpu) report.device.chosen_because = "counts only: no GPU asked for or found";
  report.timed = gpu != nullptr;
  for (const auto& m : kMath) report.rows.push_back(count_math(m, o));
  for (Shape b : kShapes) report.rows.push_back(count_matrix(b, o));
  if (gpu)
    for (auto& row : report.rows) time_demo_on_gpu(row, o, *gpu);
  return report;
}

#if !RL_WITH_CUDA
void time_demo_on_gpu(DemoRow&, const DemoOptions&, Device&) {
  throw UsageError("demos: this reducelab was built without the CUDA backend");
}
#endif

}  // namespace rl::lab
