#include "lab/littles_law.hpp"

#include <algorithm>

namespace rl::lab {

std::optional<double> bytes_in_flight_per_sm(const gallery::Entry& e, std::size_t input_bytes, unsigned block,
                                             int max_blocks_per_sm, std::uint64_t grid, int sm_count) {
  if (e.independent_loads == 0 || sm_count <= 0 || max_blocks_per_sm <= 0) return std::nullopt;
  const double blocks = std::min(static_cast<double>(max_blocks_per_sm), static_cast<double>(grid) / sm_count);
  const double width = e.load_width ? e.load_width : static_cast<double>(input_bytes);
  return blocks * block * e.independent_loads * width;
}

double predicted_gb_per_s(double bytes_per_sm, int sm_count, double latency_ns, double ceiling_gb_per_s) {
  if (latency_ns <= 0) return ceiling_gb_per_s;
  const double gbs = sm_count * bytes_per_sm / latency_ns;
  return ceiling_gb_per_s > 0 ? std::min(gbs, ceiling_gb_per_s) : gbs;
}

}  // namespace rl::lab
