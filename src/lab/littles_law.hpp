#pragma once
// Little's law for the gallery: to sustain B bytes/s against a latency of L seconds, B x L
// bytes must be in flight. A kernel keeps (resident threads per SM) x (independent loads per
// thread, declared in the registry) x (bytes per load) in flight on each SM, so it can read at
// most min(read ceiling, SMs x that / L).
#include <cstddef>
#include <cstdint>
#include <optional>

#include "gallery/registry.hpp"

namespace rl::lab {

// Bytes in flight per SM, or empty when the entry declares no loads. Resident threads are the
// occupancy limit (max_blocks_per_sm x block), or fewer when the grid does not fill every SM.
std::optional<double> bytes_in_flight_per_sm(const gallery::Entry& e, std::size_t input_bytes, unsigned block,
                                             int max_blocks_per_sm, std::uint64_t grid, int sm_count);

// min(ceiling, SMs x bytes per SM / latency): bytes per nanosecond are GB/s.
double predicted_gb_per_s(double bytes_per_sm, int sm_count, double latency_ns, double ceiling_gb_per_s);

}  // namespace rl::lab
