// The gallery's entries, in the order the books teach them. Host code: the launchers are bound
// per backend in bind_cuda_*.cu / bind_simt_*.cpp and looked up here by id.
#include "gallery/registry.hpp"

#include <algorithm>
#include <string>

#include "gallery/geometry.hpp"

namespace rl::gallery {

std::string_view name(Backend b) {
  switch (b) {
    case Backend::cuda: return "cuda";
    case Backend::simt: return "simt";
  }
  return "?";
}

std::string_view name(Accumulate a) {
  switch (a) {
    case Accumulate::wide: return "wide";
    case Accumulate::wrap: return "wrap";
  }
  return "?";
}

namespace {

// Every kernel of the gallery must read each input element once.
std::size_t read_once(std::size_t n, std::size_t input_bytes) { return n * input_bytes; }

// Scratch of a kernel that leaves one partial per `per_thread * block` elements for the final
// pass (final_pass.cuh).
template <unsigned per_thread>
std::size_t partials_scratch(std::size_t n, unsigned block, std::size_t acc_bytes) {
  return final_pass_scratch(ceil_div(n, static_cast<std::size_t>(block) * per_thread), acc_bytes);
}

std::size_t no_scratch(std::size_t, unsigned, std::size_t) { return 0; }

std::size_t vectorized_scratch(std::size_t n, unsigned block, std::size_t acc_bytes) {
  // The most blocks any input type gives: 8-byte elements, two per vector.
  return final_pass_scratch(vectorized_blocks(n, block, 8), acc_bytes);
}

std::size_t cub_scratch(std::size_t n, unsigned, std::size_t acc_bytes) {
  return cub_scratch_bound(n, acc_bytes);
}

constexpr std::string_view kFinalPartials =
    "one partial per block into scratch, then finalPass (final_pass.cuh): deterministic, fixed "
    "order; one block when at most 16384 partials, else 4096-partial chunks first";
constexpr std::string_view kFinalSegments =
    "the book's single-block kernel runs once per segment of 2*block elements (grid = "
    "ceil(n / (2*block)), block b on input + b*2*block); each block's value is a partial in "
    "scratch, then finalPass (final_pass.cuh) reduces the partials in fixed order";
constexpr std::string_view kFinalAtomic =
    "none: each block combines its value into the result with an atomic (rl::atomic_combine) "
    "after a one-thread kernel writes the op's identity there";

Constraints in_place(unsigned items_per_thread) {
  Constraints c;
  c.items_per_thread = items_per_thread;
  c.in_place = true;
  return c;
}

Constraints reads(unsigned items_per_thread) {
  Constraints c;
  c.items_per_thread = items_per_thread;
  return c;
}

using BytesRead = std::size_t (*)(std::size_t, std::size_t);
using ScratchBytes = std::size_t (*)(std::size_t, unsigned, std::size_t);

void add(std::vector<Entry>& r, std::string_view id, std::string_view name, std::string_view family,
         std::string_view seed, std::string_view technique, std::string_view still_slow,
         std::string_view final_pass, Constraints c, BytesRead bytes_read, ScratchBytes scratch,
         std::string_view param = {}) {
  r.push_back(Entry{id, name, family, seed, technique, still_slow, final_pass, c, bytes_read, scratch,
                    param});
}

std::vector<Entry> make_registry() {
  std::vector<Entry> r;

  // ---- divergence: Professional CUDA C Programming 3.4, seed 000 ----
  add(r, "warmup", "warmup", "divergence", "000 §2 (Professional CUDA C 3.4)",
               "the same code as reduceNeighbored, run first so that GPU start-up is not charged "
               "to the first measured kernel",
               "as reduceNeighbored", kFinalPartials, in_place(1), read_once,
               partials_scratch<1>);
  add(r, "neighbored", "reduceNeighbored", "divergence", "000 §2 (Professional CUDA C 3.4.2)",
               "neighbored pairs in place in global memory: thread tid adds idata[tid + stride] when "
               "tid % (2*stride) == 0",
               "after the first step only every other thread works but every warp stays scheduled "
               "(divergence in every warp at every step); every step goes through global memory",
               kFinalPartials, in_place(1), read_once, partials_scratch<1>);
  add(r, "neighbored-less", "reduceNeighboredLess", "divergence",
               "000 §3 (Professional CUDA C 3.4.3)",
               "same pairs, but thread tid works on index 2*stride*tid: the working threads are the "
               "first of the block, so whole warps go idle together",
               "the last five steps diverge inside one warp; the strided index spreads a warp's "
               "accesses over more memory segments each step; global memory round trips",
               kFinalPartials, in_place(1), read_once, partials_scratch<1>);
  add(r, "interleaved", "reduceInterleaved", "divergence", "000 §4 (Professional CUDA C 3.4.4)",
               "interleaved pairs: the stride starts at half the block and halves; a warp reads and "
               "writes consecutive addresses",
               "intra-warp divergence in the last five steps; one element per thread, so half the "
               "threads idle from the first step; every step through global memory",
               kFinalPartials, in_place(1), read_once, partials_scratch<1>);

  // ---- unrolling: Professional CUDA C Programming 3.5 (the continuation seeds 000/002 point to) ----
  add(r, "unroll2", "reduceUnrolling2", "unrolling",
               "002 §3.2 (Professional CUDA C 3.5.1)",
               "each block first adds two tiles element-wise, then the interleaved tree: half the "
               "blocks, more independent loads per thread",
               "the tree's divergent last warp, a barrier and a global round trip per step",
               kFinalPartials, in_place(2), read_once, partials_scratch<2>);
  add(r, "unroll4", "reduceUnrolling4", "unrolling", "002 §3.2 (Professional CUDA C 3.5.1)",
               "four tiles per block folded before the tree",
               "as reduceUnrolling2, with a quarter of the blocks", kFinalPartials, in_place(4),
               read_once, partials_scratch<4>);
  add(r, "unroll8", "reduceUnrolling8", "unrolling", "002 §3.2 (Professional CUDA C 3.5.1)",
               "eight tiles per block: eight independent loads in flight per thread hide memory "
               "latency",
               "the tree, its divergent last warp and its barriers", kFinalPartials, in_place(8),
               read_once, partials_scratch<8>);
  add(r, "unroll-warps8", "reduceUnrollWarps8", "unrolling",
               "002 §3.2 (Professional CUDA C 3.5.2)",
               "unroll 8, tree down to 64 elements, then warp 0 finishes without __syncthreads; "
               "each unrolled step is read, __syncwarp, write, __syncwarp (correct under "
               "independent thread scheduling)",
               "the warp steps still go through global memory; the tree loop still tests the "
               "stride at run time",
               kFinalPartials, in_place(8), read_once, partials_scratch<8>);
  {
    Constraints c = in_place(8);
    c.unsafe = true;
    c.deterministic = false;
    add(r, "unroll-warps8-volatile", "reduceUnrollWarps8Volatile", "unrolling",
                 "002 §3.2 (Professional CUDA C 3.5.2, as printed)",
                 "the book's last warp as printed: a volatile pointer and no __syncwarp, relying "
                 "on the 32 lanes running in lockstep (on the last 64 values moved to shared "
                 "memory, where racecheck can see it); UNSAFE: a data race since Volta's "
                 "independent thread scheduling (the SIMT backend and racecheck report it)",
                 "as reduceUnrollWarps8, and it may return a wrong answer", kFinalPartials, c,
                 read_once, partials_scratch<8>);
  }
  add(r, "complete-unroll-warps8", "reduceCompleteUnrollWarps8", "unrolling",
               "002 §3.2 (Professional CUDA C 3.5.3)",
               "the tree is unrolled too: one guarded step per block size up to 1024, then the "
               "unrolled last warp",
               "blockDim.x is a run-time value, so every guard is still tested; partial sums in "
               "global memory",
               kFinalPartials, in_place(8), read_once, partials_scratch<8>);
  add(r, "complete-unroll", "reduceCompleteUnroll", "unrolling",
               "002 §3.2 (Professional CUDA C 3.5.4)",
               "the block size is a template parameter (instantiated 32..1024), so the compiler "
               "drops the steps a block size does not need",
               "partial sums still live in global memory; a block's last steps use one warp",
               kFinalPartials, in_place(8), read_once, partials_scratch<8>);

  // ---- shared memory: seed 001 ----
  add(r, "bc-add", "BC_addKernel", "shared-memory", "001",
               "the block's elements copied once into shared memory and reduced there, strided "
               "addressing index = 2*i*tid: contiguous working threads",
               "2-, 4-, ... way bank conflicts (a warp's addresses 2*i words apart); one element "
               "per thread; a barrier per step",
               kFinalPartials, reads(1), read_once, partials_scratch<1>);
  add(r, "nbc-add", "NBC_addKernel2", "shared-memory", "001",
               "sequential addressing in shared memory: thread tid adds tid + i, a warp touches 32 "
               "consecutive words (no bank conflict)",
               "half the threads idle from the first step; the last five steps diverge in one "
               "warp; a barrier per step",
               kFinalPartials, reads(1), read_once, partials_scratch<1>);

  // ---- PMPP chapter 10: seed 004 ----
  add(r, "pmpp-simple", "SimpleReductionKernel", "pmpp", "004 §10.3",
               "the reduction tree of one block in place: thread t owns element 2t and works while "
               "t % stride == 0",
               "control divergence in every warp from the second step (35% of execution resources "
               "useful at 256 elements) and memory divergence; every step through global memory",
               kFinalSegments, in_place(2), read_once, partials_scratch<2>);
  add(r, "pmpp-convergent", "ConvergentSumReductionKernel", "pmpp", "004 §10.4",
               "the stride starts at blockDim.x and halves: active threads stay packed at the "
               "front, whole warps retire together, accesses coalesce",
               "every step round-trips through global memory; the last five steps run one partly "
               "active warp",
               kFinalSegments, in_place(2), read_once, partials_scratch<2>);
  add(r, "pmpp-shared", "SharedMemoryReductionKernel", "pmpp", "004 §10.6",
               "the first step adds two loaded elements, the rest of the tree runs in shared "
               "memory: one global read per element and one write per block",
               "one short block per 2*block elements, each ending in a long, mostly idle tree; a "
               "partials pass follows",
               kFinalSegments, reads(2), read_once, partials_scratch<2>);
  {
    Constraints c = reads(2);
    c.deterministic = false;
    c.float_atomics = true;
    add(r, "pmpp-segmented", "SegmentedSumReductionKernel", "pmpp", "004 §10.7",
                 "hierarchical reduction for any length: every block reduces its 2*block segment "
                 "in shared memory and combines it into the result with one atomic",
                 "one atomic per block serialises at the result; float atomics make float sums "
                 "vary run to run; two elements per thread",
                 kFinalAtomic, c, read_once, no_scratch);
  }
  {
    Constraints c = reads(2 * 2);  // 2 * COARSE_FACTOR with the default factor 2
    c.deterministic = false;
    c.float_atomics = true;
    add(r, "pmpp-coarsened", "CoarsenedSumReductionKernel", "pmpp", "004 §10.8",
                 "thread coarsening: a block owns 2*COARSE_FACTOR tiles, each thread folds its "
                 "element of every tile in a register before one tree and one atomic",
                 "4-byte loads, one per tile per thread; float atomics make float sums vary run "
                 "to run",
                 kFinalAtomic, c, read_once, no_scratch,
                 "COARSE_FACTOR: 1, 2, 4 or 8 (default 2); a block covers 2*COARSE_FACTOR*block "
                 "elements");
  }

  // ---- dynamic parallelism: seed 002 §3.3 (Professional CUDA C 3.6.2) ----
  add(r, "nested", "gpuRecursiveReduce2", "nested", "002 §3.3 (Professional CUDA C 3.6.2)",
               "nested reduction: each level folds every 2*block segment in half in place, and "
               "thread 0 of block 0 tail-launches the next level from the device (CUDA 13 CDP2: "
               "the tail launch replaces device-side cudaDeviceSynchronize)",
               "log2(block)+1 dependent device-side grid launches, the last ones of 1..16-thread "
               "blocks; every level round-trips through global memory",
               "the last level writes one partial per 2*block segment into scratch, then "
               "finalPass (final_pass.cuh) in fixed order",
               in_place(2), read_once, partials_scratch<2>);

  // ---- what the field does today ----
  add(r, "warp-shuffle", "reduceWarpShuffle", "modern", "beyond the seeds (Kepler shuffles)",
               "8 elements per thread, then each warp folds its values in registers with "
               "__shfl_down_sync: one shared slot per warp, one __syncthreads per block",
               "4-byte loads; a grid sized to n (many short blocks); a second launch for the "
               "partials",
               kFinalPartials, reads(8), read_once, partials_scratch<8>);
  add(r, "warp-reduce-sync", "reduceWarpReduceSync", "modern",
               "beyond the seeds (sm_80 __reduce_*_sync)",
               "the warp step in one instruction: __reduce_add/min/max_sync for int32 (wrap); an "
               "int64 sum (int32 wide) uses three 32-bit reductions of its 16/16/32-bit parts; "
               "float, double and int64 min/max fall back to shuffles",
               "as reduceWarpShuffle: the warp step is not the bottleneck of a memory-bound "
               "reduction",
               kFinalPartials, reads(8), read_once, partials_scratch<8>);
  add(r, "cooperative-groups", "reduceCooperativeGroups", "modern",
               "beyond the seeds (cooperative groups)",
               "the same shape with cooperative groups: cg::this_thread_block, "
               "cg::tiled_partition<32>, cg::reduce",
               "as reduceWarpShuffle; the gain is in what the code says", kFinalPartials, reads(8),
               read_once, partials_scratch<8>);
  add(r, "vectorized", "reduceVectorized", "modern", "beyond the seeds (CUB-style loads)",
               "16-byte vector loads in a grid-stride loop over a grid capped at 2048 blocks: many "
               "elements per thread accumulated in a register, few long-lived blocks",
               "a second launch for the partials; the grid is not tuned to the device",
               kFinalPartials, reads(16), read_once, vectorized_scratch);
  add(r, "single-pass", "reduceSinglePass", "modern",
               "beyond the seeds (threadFenceReduction)",
               "single pass: each block writes its partial, __threadfence, takes a ticket from an "
               "atomic counter; the last block reduces all partials in fixed order and resets the "
               "counter for the next launch",
               "the last block's pass over the partials is serial with everything before it; "
               "4-byte loads; a grid sized to n",
               "none: the last block to finish reduces the partials (scratch) into the result in "
               "fixed order",
               reads(8), read_once, partials_scratch<8>);
  {
    Constraints c;
    c.pow2_block = false;  // CUB picks its own block size; --block is ignored
    c.gpu_only = true;
    c.gpu_only_reason =
        "CUB is NVIDIA's CUDA library, not a kernel written in the gallery's portable vocabulary";
    c.is_reference = true;
    add(r, "cub", "cub::DeviceReduce", "reference", "reference (CUB DeviceReduce)",
                 "the library baseline: cub::DeviceReduce::Sum/Min/Max (Reduce for int32 "
                 "accumulated as int64), tuned per architecture; --block is ignored",
                 "nothing the gallery knows of: the row every other row is measured against",
                 "CUB's own (its temp storage is carved from scratch)", c, read_once,
                 cub_scratch);
  }

  // Loads in flight per thread, read off each kernel's first pass over the input (the pass that
  // moves almost all the bytes). The in-place trees' first step has half the threads load two
  // elements: one per thread on average. The unrolled folds issue their UNROLL loads before the
  // first add; the PMPP kernels load two elements per thread; the coarsened kernel its
  // 2 x COARSE_FACTOR (default factor 2); reduceVectorized one 16-byte vector per loop trip
  // (the trip count is not known at compile time, so the loop is not unrolled into more).
  const struct {
    std::string_view id;
    unsigned loads, width;
  } in_flight[] = {
      {"warmup", 1, 0}, {"neighbored", 1, 0}, {"neighbored-less", 1, 0}, {"interleaved", 1, 0},
      {"unroll2", 2, 0}, {"unroll4", 4, 0}, {"unroll8", 8, 0}, {"unroll-warps8", 8, 0},
      {"unroll-warps8-volatile", 8, 0}, {"complete-unroll-warps8", 8, 0}, {"complete-unroll", 8, 0},
      {"bc-add", 1, 0}, {"nbc-add", 1, 0}, {"pmpp-simple", 2, 0}, {"pmpp-convergent", 2, 0},
      {"pmpp-shared", 2, 0}, {"pmpp-segmented", 2, 0}, {"pmpp-coarsened", 4, 0}, {"nested", 2, 0},
      {"warp-shuffle", 8, 0}, {"warp-reduce-sync", 8, 0}, {"cooperative-groups", 8, 0},
      {"vectorized", 1, 16}, {"single-pass", 8, 0},
  };
  for (const auto& d : in_flight)
    for (Entry& e : r)
      if (e.id == d.id) e.independent_loads = d.loads, e.load_width = d.width;
  return r;
}

}  // namespace

const std::vector<Entry>& registry() {
  static const std::vector<Entry> entries = make_registry();
  return entries;
}

const Entry* find(std::string_view id) {
  for (const auto& e : registry())
    if (e.id == id) return &e;
  return nullptr;
}

std::string ids() {
  std::string s;
  for (const auto& e : registry()) {
    if (!s.empty()) s += ", ";
    s += e.id;
  }
  return s;
}

LaunchFn launcher(const Entry& e, Backend b) {
  if (b == Backend::simt && e.constraints.gpu_only) return nullptr;
  const auto& table = b == Backend::cuda ? cuda_bindings() : simt_bindings();
  for (const auto& binding : table)
    if (binding.id == e.id) return binding.launch;
  return nullptr;
}

Dtype input_dtype(Dtype d) { return d; }

std::size_t accumulator_bytes(Dtype d, Accumulate a) {
  if (d == Dtype::int32) return a == Accumulate::wide ? sizeof(long long) : sizeof(int);
  return reducelab::size_of(d);
}

std::size_t input_bytes(const Entry& e, Dtype d, Accumulate a) {
  return e.constraints.in_place ? accumulator_bytes(d, a) : reducelab::size_of(d);
}

bool deterministic(const Entry& e, Dtype d, OpKind op) {
  if (e.constraints.unsafe) return false;
  if (e.constraints.float_atomics) return reducelab::is_integer(d) || op != OpKind::sum;
  return e.constraints.deterministic;
}

}  // namespace rl::gallery
