#include "lab/measure.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "lab/device.hpp"

namespace rl::lab {

std::string_view name(TimingMode m) {
  switch (m) {
    case TimingMode::cold: return "cold";
    case TimingMode::batch: return "batch";
    case TimingMode::sync: return "sync";
  }
  return "?";
}

std::optional<TimingMode> parse_timing_mode(std::string_view s) {
  for (TimingMode m : kAllTimingModes)
    if (name(m) == s) return m;
  return std::nullopt;
}

std::string_view describe(TimingMode m) {
  switch (m) {
    case TimingMode::cold: return "each call queued behind an L2 flush: the GPU time of one call";
    case TimingMode::batch: return "back-to-back calls between two events, L2 warm: time per call = total / calls";
    case TimingMode::sync: return "device idle, then event, one call, event, host waits: the latency a caller sees";
  }
  return "?";
}

TimeStats time_stats(std::vector<double> us) {
  TimeStats s;
  if (us.empty()) return s;
  std::sort(us.begin(), us.end());
  auto at = [&](double q) {
    const double pos = q * static_cast<double>(us.size() - 1);
    const auto i = static_cast<std::size_t>(pos);
    return i + 1 < us.size() ? us[i] + (pos - static_cast<double>(i)) * (us[i + 1] - us[i]) : us[i];
  };
  s.repeats = static_cast<int>(us.size());
  s.median = at(0.5);
  s.min = us.front();
  s.max = us.back();
  s.p25 = at(0.25);
  s.p75 = at(0.75);
  return s;
}

double median(std::vector<double> v) { return time_stats(std::move(v)).median; }

double time_ms_per_call(Device& device, TimingMode mode, const std::function<void()>& call, int calls) {
  switch (mode) {
    case TimingMode::cold:
      device.flush_l2();  // enqueued first: the call waits behind it, so its submission is not timed
      return device.time_ms(call);
    case TimingMode::batch: {
      const int k = std::max(calls, 1);
      return device.time_ms([&] {
               for (int i = 0; i < k; ++i) call();
             }) /
             k;
    }
    case TimingMode::sync:
      device.synchronize();  // nothing queued: the start event fires before the call is submitted
      return device.time_ms(call);
  }
  throw std::logic_error("time_ms_per_call: unknown mode");
}

std::vector<double> measure(Device* device, TimingMode mode, int repeats, int calls, const Measured& m) {
  auto once = [&] {
    m.call();
    if (device) device->synchronize();
  };
  if (m.prepare) m.prepare();
  if (m.around_warmup) m.around_warmup(once);
  else once();
  if (m.verify) m.verify(-1);
  std::vector<double> ms;
  for (int rep = 0; rep < repeats; ++rep) {
    if (m.prepare) m.prepare();
    if (device) {
      ms.push_back(time_ms_per_call(*device, mode, m.call, calls));
    } else {
      const auto t0 = std::chrono::steady_clock::now();
      m.call();
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    if (m.verify) m.verify(rep);
  }
  return ms;
}

double floor_us(Device& device, TimingMode mode, const std::function<void()>& launch, int repeats, int calls) {
  for (int i = 0; i < 5; ++i) launch();  // loads the module, wakes the stream
  device.synchronize();
  Measured m;
  m.call = launch;
  std::vector<double> ms = measure(&device, mode, std::max(repeats, 1), calls, m);
  return 1e3 * median(std::move(ms));
}

}  // namespace rl::lab
