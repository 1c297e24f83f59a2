#pragma once
// The lab's one measurement loop: a verified warm-up, then timed repeats in one of three timing
// modes, then statistics. `run`, `demos` and `bench` all time through it, so "a time" means the
// same thing in every command's output.
//
// Timing modes (named as nvbench names them):
//   cold   each call queued behind an L2 flush (a write of twice the L2's size): the GPU time of
//          one call with nothing of its input in L2, host submission hidden behind the flush;
//   batch  `calls` back-to-back calls between two events, L2 left warm: the throughput of a loop
//          of calls, host dispatch included; the time of one call is the total / calls;
//   sync   the device idle, then event, one call, event, and the host waits: the latency a
//          caller sees, host dispatch and launch included.
// The CPU backend of bench has none of these: it times a call with a steady clock (`wall`).
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

namespace rl::lab {

class Device;

enum class TimingMode { cold, batch, sync };
inline constexpr TimingMode kAllTimingModes[] = {TimingMode::cold, TimingMode::batch, TimingMode::sync};
std::string_view name(TimingMode m);
std::optional<TimingMode> parse_timing_mode(std::string_view s);
// One sentence: what a time in this mode is.
std::string_view describe(TimingMode m);

// Order statistics of timed samples (quartiles by linear interpolation between neighbours).
struct TimeStats {
  int repeats = 0;
  double median = 0, min = 0, max = 0, p25 = 0, p75 = 0;
};
TimeStats time_stats(std::vector<double> samples);
double median(std::vector<double> samples);

// The time of `calls` calls in `mode`, in ms per call. `call` enqueues one call on the device's
// stream. calls > 1 only means something in batch mode (cold and sync time one call).
double time_ms_per_call(Device& device, TimingMode mode, const std::function<void()>& call, int calls = 1);

// What one measurement does besides the timed call.
struct Measured {
  std::function<void()> prepare;  // untimed, before the warm-up and every repeat (restore, poison)
  std::function<void()> call;     // the timed work: enqueues one call
  // After the warm-up (rep = -1) and after every timed repeat (rep = 0, 1, ...): reads the result
  // back and judges it. May be empty.
  std::function<void(int rep)> verify;
  // Runs once, around the warm-up only (e.g. to record the launches it makes). May be empty.
  std::function<void(const std::function<void()>&)> around_warmup;
};

// The loop: prepare, warm-up (untimed, synchronized, verified), then `repeats` times: prepare,
// time in `mode` (`calls` back-to-back calls in batch mode), verify. Returns the samples in ms
// per call. device == nullptr: the host runs `call` synchronously and a steady clock times it.
std::vector<double> measure(Device* device, TimingMode mode, int repeats, int calls, const Measured& m);

// A floor for `mode`: the median time of `launch` (an empty kernel launch) measured in the same
// mode, `repeats` times after a few untimed launches, in microseconds.
double floor_us(Device& device, TimingMode mode, const std::function<void()>& launch, int repeats, int calls);

}  // namespace rl::lab
