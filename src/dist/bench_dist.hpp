#pragma once
// `reducelab bench --gpus N`: dist::reduce over 1..N GPUs of one process (or the N processes of
// an mpirun) against one GPU over the same total, against local CUB + ncclAllReduce on the same
// shards, the weak-scaling table (each GPU keeps its shard size) and the floor of one small
// collective, all timed the same way (CUDA events, warm-up, median of the repeats; a repeat's
// time is the slowest rank's).
#include <iosfwd>
#include <string>

namespace reducelab::dist::bench {

struct Args {
  int gpus = 0;
  std::string dtypes;   // float (default), double, int32
  std::string ops;      // sum (default), min, max
  std::string sizes;    // strong-scaling totals, e.g. 2^20,2^24,2^28,2^30 (the default)
  std::string weak;     // weak-scaling sizes per GPU (default 2^20,2^22,...,2^30,2^31)
  std::string repeats;  // timed repeats (default 20)
  std::string json;     // write the JSON here
  std::string plot;     // FILE.png/.svg: scripts/plot-dist of the JSON
};

// Runs the sweep, prints tables to `out`; the exit status (2: bad arguments, 1: a failure).
int command(const Args& args, std::ostream& out);

}  // namespace reducelab::dist::bench
