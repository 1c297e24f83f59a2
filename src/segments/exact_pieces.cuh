#pragma once
// The GPU side of exact piece sums (exact_pair.cuh has the pair): how a kernel writes or lists a
// piece, and reduceRedoPieces, which sums the listed pieces again with digits. nvcc and g++ (SIMT).
#include <atomic>
#include <cstdint>

#include "reducelab/detail/agent_exact.cuh"
#include "segments/exact_pair.cuh"
#include "segments/pieces.hpp"

namespace reducelab::detail {

// The redo list in the workspace's pieces area: word 0 counts lost pieces, word 1 is the redo
// kernel's ticket, words 2.. hold up to kRedoSlots piece numbers. Zero between launches.
inline constexpr std::uint64_t kRedoSlots = 1u << 16;

// The slots the kernels use: kRedoSlots on the GPU. The SIMT runner can lower it (never raise
// it) so that tests reach the list's overflow path with a few hundred pieces instead of 65537.
#if RL_SIMT
inline std::uint64_t simt_redo_slots = kRedoSlots;
__device__ __forceinline__ std::uint64_t redo_slots() { return simt_redo_slots < kRedoSlots ? simt_redo_slots : kRedoSlots; }
#else
__device__ __forceinline__ std::uint64_t redo_slots() { return kRedoSlots; }
#endif

// Folds N loaded elements into `acc`: exact pairs and the min and max of 16-bit floats take them as
// a batch (absorb_batch), other operations one by one through an Inner (index_of(k): element k's index in its piece).
template <class Sem, unsigned N, class T, class IndexOf>
__device__ __forceinline__ typename Sem::Acc absorb_elements(typename Sem::Acc acc, const T* v, IndexOf index_of) {
  if constexpr (requires { Sem::template absorb_batch<N>(acc, v); }) {
    return Sem::template absorb_batch<N>(acc, v);
  } else {
    typename Sem::Inner in = Sem::inner_identity();
#pragma unroll
    for (unsigned k = 0; k < N; ++k) in = Sem::inner_combine(in, Sem::lift(v[k], index_of(k)));
    return Sem::absorb(acc, in);
  }
}

// Whether pieces of T under Sem are summed in windows first: exact sums of float, half and bfloat16.
template <class T, class Sem>
inline constexpr bool window_sums_v = is_exact_pieces<Sem>::value && !std::is_same_v<T, double>;
// Whether they are split on a grid rounds of loads at a time (CutFold): exact sums of doubles.
template <class T, class Sem>
inline constexpr bool cut_sums_v = is_exact_pieces<Sem>::value && std::is_same_v<T, double>;

// ---- Halves in plain double chains --------------------------------------------------------------
// Up to kHalfChain halves sum exactly in a chain of double additions, whose value also shows an
// infinity or NaN (exact_pair.cuh, the half windows). Longer runs hand their chain to the exact
// pair every kHalfChain elements (half_chain_into_pair).
// A chain's double into an exact pair: nothing to hand over while the sum is -0 (no element, or
// only -0s).
template <class Sem>
RL_HD_INLINE typename Sem::Acc half_chain_into_pair(typename Sem::Acc p, double s) {
  if (!finite_double(s)) return Sem::combine(p, special_pair(special_flag(s)));
  if (bits_of_double(s) == 0x8000000000000000ull) return p;
  return Sem::combine(p, typename Sem::Acc{s, 0.0});
}
// The two halves of a 32-bit word, summed in double (exact).
RL_HD_INLINE double half_word_sum(std::uint32_t word) {
  half lo, hi;
  lo.bits = static_cast<std::uint16_t>(word);
  hi.bits = static_cast<std::uint16_t>(word >> 16);
  return static_cast<double>(widen(lo)) + static_cast<double>(widen(hi));
}
// The result of n halves (1 <= n <= kHalfChain) whose chain summed to s: rounded once, or the
// infinity or NaN the pair's flags give (a canonical NaN whatever NaN the double holds).
template <class Sem>
RL_HD_INLINE typename Sem::Out half_chain_result(double s, std::uint64_t n) {
  if (finite_double(s)) return Sem::finish_exact(s, n);
  return Sem::finish(special_pair(special_flag(s)), n);
}

// One column's running sum: a window (exact_pair.cuh's WindowSum) in front of the exact pair.
// Batches add in plain double while the exponents seen keep every partial sum exact for as many
// elements as the thread may take (`span`); a batch that would widen the window past that first
// hands the running sum to the pair, with one combine. RunningFold keeps one, the fold of two
// columns a lane (agent_columns.cuh) one per column.
template <class T, class Sem>
struct ColumnWindow {
  using Acc = typename Sem::Acc;
  Acc acc = Sem::identity();
  WindowSum w = window_identity();

  // A batch's window into the running one; false when not even the batch alone fits (rare: a
  // wide exponent range, an infinity or NaN), and the caller adds its elements to acc one by one.
  __device__ __forceinline__ bool take(const WindowSum& batch, int span) {
    const WindowSum both = window_merge(w, batch);
    if (window_fits<T>(both, span)) {
      w = both;
      return true;
    }
    flush();
    if (window_fits<T>(batch, span)) {
      w = batch;
      return true;
    }
    return false;
  }
  __device__ __forceinline__ void flush() {
    // Nothing to hand over only while the sum is -0 (no element, or only -0s); a +0 must go.
    if (bits_of_double(w.s) != 0x8000000000000000ull) acc = Sem::combine(acc, Acc{w.s, 0.0});
    w = window_identity();
  }
};

// A thread's fold of the elements it reads, batch by batch (index_of(k): element k's index in
// its piece). Exact pairs of float, half and bfloat16 elements go through a ColumnWindow (`most`,
// the most elements the thread may take, is given once: each batch's check is then a subtraction
// and a comparison), so a thread usually combines its pair once, at the end, instead of once per
// batch (four TwoSums each). Double pairs: absorb_run (two bare TwoSums per element while
// nothing is left over). Every other operation: absorb_elements.
template <class T, class Sem>
struct RunningFold {
  using Acc = typename Sem::Acc;
  static constexpr bool kWindow = window_sums_v<T, Sem>;
  ColumnWindow<T, Sem> col;  // only acc is used without a window
  int span = 0;

  RunningFold() = default;  // then assigned: arrays of them (reduceNarrowColumns)
  __device__ __forceinline__ explicit RunningFold(std::uint64_t most) {
    if constexpr (kWindow) span = window_span<T>(most);
  }
  template <unsigned N, class IndexOf>
  __device__ __forceinline__ void take(const T* v, IndexOf index_of) {
    if constexpr (!kWindow && is_exact_pieces<Sem>::value) {
      col.acc = Sem::template absorb_run<N>(col.acc, v);
    } else if constexpr (!kWindow) {
      col.acc = absorb_elements<Sem, N>(col.acc, v, index_of);
    } else {
      WindowSum batch = window_identity();
      window_add_batch<N, true>(batch, v);  // the smallest magnitude too: a thread's run may be long
      if (col.take(batch, span)) return;
#pragma unroll
      for (unsigned j = 0; j < N; ++j) col.acc = Sem::combine(col.acc, Sem::lift(v[j], index_of(j)));
    }
  }
  __device__ __forceinline__ void take_one(T x, std::uint64_t index) {
    if constexpr (!kWindow) col.acc = Sem::absorb(col.acc, Sem::inner_combine(Sem::inner_identity(), Sem::lift(x, index)));
    else take<1>(&x, [&](unsigned) { return index; });
  }
  __device__ __forceinline__ Acc result() {
    if constexpr (kWindow) col.flush();
    return col.acc;
  }
};

// K columns' halves in plain double chains, each handed to its column's pair every kHalfChain
// elements (every chain takes as many elements as the others).
template <class Sem, unsigned K>
struct HalfChains {
  using Pair = typename Sem::Acc;
  Pair pair[K];
  double s[K];
  unsigned taken = 0;  // elements in each chain

  RL_HD_INLINE HalfChains() {
#pragma unroll
    for (unsigned j = 0; j < K; ++j) pair[j] = Sem::identity(), s[j] = -0.0;
  }
  // Before N more elements a chain: the chains into their pairs if they would pass kHalfChain.
  template <unsigned N>
  __device__ __forceinline__ void make_room() {
    static_assert(N <= kHalfChain);
    if (taken + N > kHalfChain) {
#pragma unroll
      for (unsigned j = 0; j < K; ++j) pair[j] = hand_over(pair[j], s[j]), s[j] = -0.0;
      taken = 0;
    }
    taken += N;
  }
  __device__ __forceinline__ void add(unsigned j, half x) { s[j] += static_cast<double>(widen(x)); }
  __device__ __forceinline__ Pair result(unsigned j) { return hand_over(pair[j], s[j]); }

 private:
  // Out of line: the pair's combine, inlined at each call, costs registers in the loop.
  __device__ __noinline__ static Pair hand_over(Pair p, double v) { return half_chain_into_pair<Sem>(p, v); }
};

// Exact half sums: a plain double chain in place of the window (no magnitudes to track: the
// chain cannot fail).
template <class Sem>
  requires is_exact_pieces<Sem>::value
struct RunningFold<half, Sem> {
  using Acc = typename Sem::Acc;
  HalfChains<Sem, 1> chain;

  RunningFold() = default;
  __device__ __forceinline__ explicit RunningFold(std::uint64_t) {}
  template <unsigned N, class IndexOf>
  __device__ __forceinline__ void take(const half* v, IndexOf) {
    chain.template make_room<N>();
#pragma unroll
    for (unsigned j = 0; j < N; ++j) chain.add(0, v[j]);
  }
  __device__ __forceinline__ void take_one(half x, std::uint64_t index) {
    take<1>(&x, [&](unsigned) { return index; });
  }
  __device__ __forceinline__ Acc result() { return chain.result(0); }
};

// A lane's elements in plain double windows of at most `most` elements (fold_contiguous settles
// one after each round of loads), each checked and added to an exact pair with two bare TwoSums
// when it settles. Against RunningFold (a window check and merge per vector, a full combine when
// a window would widen too far) the loop keeps fewer registers and instructions; against one
// window for the lane's whole run (checked once at the end), a window spans a round, not a
// lane's share of a long row, so it rarely fails: with one window a lane, 256 of the 524288 lanes
// of a float sum along 16384 x 16384 rows in [-1, 1) failed and their second pass took the
// probe's warp-a-row kernel from 245.0 (RunningFold) to 330.4 us (H200). A lane whose window or
// pair does fail (a wide exponent range, an infinity or NaN) folds its elements again with
// PairFold.
template <class T>
struct WindowFold {
  WindowSum w = window_identity();
  double a = -0.0, b = 0.0;  // the settled windows' exact sum, unevaluated (an exact pair)
  bool exact = true;         // every window vouched for its sum and no TwoSum left a remainder
  int span;
  __device__ __forceinline__ explicit WindowFold(unsigned most) : span(window_span<T>(most)) {}
  template <unsigned N, class IndexOf>
  __device__ __forceinline__ void take(const T* v, IndexOf) {
    window_add_batch<N, true>(w, v);
  }
  __device__ __forceinline__ void take_one(T x, std::uint64_t) { window_add<T, true>(w, x); }
  __device__ __forceinline__ void settle() {
    const bool held = pair_add_held(a, b, w.s);
    exact = exact && window_fits<T>(w, span) && held;
    w = window_identity();
  }
};
// A lane's doubles a round of loads at a time (fold_contiguous's take_round), split on one grid
// (double_split, exact_sum.cuh) into two plain double sums, even and odd elements in separate
// chains. The grid is kept while the rounds' largest exponent stays within it, for up to kRounds
// rounds; then the sums go into the lane's exact pair with two bare TwoSums. Per element that is
// four additions and a few integer operations, with no chain through the pair, where absorb_run
// takes two dependent TwoSums (twelve additions) and a round of its own on a two-grid cut took
// six additions, a comparison and two TwoSums a round (the FP64 pipe was the busiest of
// reduceBlockRows: Nsight Compute, H200, docs/performance.md). A round the split cannot take (its
// exponents too far apart for the grid, too near either end of double's range, an infinity or
// NaN) goes into the pair element by element; a lane whose pair then left a remainder, or saw an
// infinity or NaN, folds its elements again with PairFold.
struct CutFold {
  static constexpr unsigned kRounds = 8;  // rounds on one grid before its sums go to the pair
  double a = -0.0, b = 0.0;  // the exact sum so far, unevaluated
  bool exact = true;         // no TwoSum left a remainder and no element was infinite or NaN
  DoubleSplit grid;          // the rounds' grid since the last settle
  double s1[2] = {0.0, 0.0}, s2[2] = {0.0, 0.0};  // even and odd elements' sums on it
  unsigned rounds = 0;       // rounds in them
  template <unsigned kIn>
  __device__ __forceinline__ void take_round(const Vec<double>* v) {
    std::uint32_t most = 0, least = 0;
    split_magnitude_range<kIn>(v, &most, &least);
    const int field = static_cast<int>(most >> 20);
    if (field > grid.field || rounds == kRounds) {  // a larger exponent, or the grid's count used up
      settle();
      if (field > grid.field) grid = double_split(most, 2 * kIn * kRounds);
    }
    if (split_holds(grid, least)) {
      split_add_vectors<kIn>(grid.sigma, v, s1, s2);
      ++rounds;
    } else {  // rare: zeros only, exponents far apart, the range's ends, an infinity or NaN
      bool held = true;
#pragma unroll
      for (unsigned i = 0; i < kIn; ++i)
#pragma unroll
        for (unsigned j = 0; j < 2; ++j) {
          const bool step = pair_add_held(a, b, v[i].v[j]);
          held = held && step;
        }
      exact = exact && held;
    }
  }
  // The grid's sums into the pair (each is exact, and so is adding the even and odd chains: the
  // grid bounds them together).
  __device__ __forceinline__ void settle() {
    if (rounds == 0) return;
    const bool high = pair_add_held(a, b, s1[0] + s1[1]);
    const bool low = pair_add_held(a, b, s2[0] + s2[1]);
    exact = exact && high && low;
    s1[0] = s1[1] = s2[0] = s2[1] = 0.0;
    rounds = 0;
  }
  template <unsigned N, class IndexOf>
  __device__ __forceinline__ void take(const double* v, IndexOf) {
#pragma unroll
    for (unsigned j = 0; j < N; ++j) take_one(v[j], 0);
  }
  __device__ __forceinline__ void take_one(double x, std::uint64_t) {
    const bool held = pair_add_held(a, b, x);
    exact = exact && held;
  }
};

// A lane's elements straight into an exact pair (WindowFold's second pass): two bare TwoSums an
// element while nothing is left over (absorb_run), a pair's full combine only for a vector where
// something is.
template <class T, class Sem>
struct PairFold {
  typename Sem::Acc acc = Sem::identity();
  template <unsigned N, class IndexOf>
  __device__ __forceinline__ void take(const T* v, IndexOf) {
    acc = Sem::template absorb_run<N>(acc, v);
  }
  __device__ __forceinline__ void take_one(T x, std::uint64_t) { acc = Sem::template absorb_run<1>(acc, &x); }
};

// Whether Sem folds several columns' exact sums a lane (PairSum, VecColumns; agent_columns.cuh):
// its Acc holds Acc::kColumns columns' pairs, and Sem::Column is one column's semantics.
template <class Sem>
inline constexpr bool two_columns_v = requires { typename Sem::Column; };

// The first element and the length of piece p.
template <class Index>
__device__ __forceinline__ void piece_extent(const Pieces& pieces, Index begin, Index end, std::uint64_t p,
                                             std::uint64_t* first, std::uint64_t* length) {
  if (pieces.offsets) {
    const std::int64_t b = begin[p], e = end[p];
    *length = segment_length(b, e);
    *first = *length ? static_cast<std::uint64_t>(b) : 0;
  } else {
    *first = p * pieces.step;
    *length = pieces.length;
  }
}

// Lists piece p for the redo (reduceRedoPieces sums it again and writes its result).
__device__ __forceinline__ void list_for_redo(rl::gmem<unsigned long long> redo, std::uint64_t piece) {
  const unsigned long long slot = atomicAdd(&redo[0], 1ull);
  if (slot < redo_slots()) redo[2 + slot] = piece;
}

// Writes piece p's result, or (an exact pair that lost part of its sum) lists p with list(p) for
// the redo.
template <class Sem, class List>
__device__ __forceinline__ void store_or_list(rl::gmem<typename Sem::Out> output, std::uint64_t p,
                                              const typename Sem::Acc& v, std::uint64_t length, List&& list) {
  if constexpr (is_exact_pieces<Sem>::value) {
    if (Sem::needs_redo(v)) {
      list(p);
      return;
    }
  } else if constexpr (two_columns_v<Sem>) {  // p is a column of vectors: list the lost column itself
    constexpr unsigned k = Sem::Acc::kColumns;
    for (unsigned j = 0; j < k; ++j)
      if (Sem::Column::needs_redo(v.c[j])) list(k * p + j);
    // A listed column's value here is a placeholder; the redo (later) writes it.
  }
  output[p] = Sem::finish(v, length);
}
// The same, listing p for reduceRedoPieces.
template <class Sem>
__device__ __forceinline__ void store_piece(rl::gmem<typename Sem::Out> output, std::uint64_t p,
                                            const typename Sem::Acc& v, std::uint64_t length,
                                            rl::gmem<unsigned long long> redo) {
  store_or_list<Sem>(output, p, v, length, [&](std::uint64_t q) { list_for_redo(redo, q); });
}

// Sums one piece again exactly with the whole block (its digits in shared memory, as reduceExact
// keeps them) and writes its result: elements x[0], x[stride], ... x[(length - 1) * stride].
// Every thread of the block calls it, or with kLanes = 32 every lane of the block's first warp
// alone (the others may have left); digits and misc[0] are free again when it returns. Out of
// line: inlined into a column kernel, it pushed that kernel's main loop into spills.
template <class T, class Out, bool kMean, unsigned kLanes = kThreads>
__device__ __noinline__ void redo_piece(rl::gmem<const T> x, std::uint64_t stride, std::uint64_t length,
                                        rl::smem<unsigned long long> digits, rl::smem<unsigned> misc,
                                        rl::gmem<Out> out) {
  static_assert(kLanes == kThreads || kLanes == 32, "a block or its first warp");
  constexpr int kD = ExactTraits<T>::kDigits;
  constexpr std::uint64_t kStrip = std::uint64_t(1) << 24;  // elements between carries of the digits
  const auto sync = [] {
    if constexpr (kLanes == 32) __syncwarp();
    else __syncthreads();
  };
  const unsigned t = threadIdx.x;  // below kLanes
  for (unsigned d = t; d < static_cast<unsigned>(kD); d += kLanes) digits[d] = 0ull;
  if (t == 0) misc[0] = 0u;
  sync();
  const BlockDigits<T> spill{digits};
  ExactCarry carry;
  for (std::uint64_t strip = 0; strip < length; strip += kStrip) {
    const std::uint64_t stop = length - strip < kStrip ? length : strip + kStrip;
    for (std::uint64_t e = strip + t; e < stop; e += kLanes) {
      const T v = x[e * stride];
      carry.add(exact_value(v), spill);
    }
    sync();
    if (t == 0)  // carry every digit but the top into [0, 2^32): no int64 overflows
      for (int d = 0; d + 1 < kD; ++d) {
        const auto s = static_cast<long long>(digits[d]);
        const long long c = s >> 32;
        digits[d] = static_cast<unsigned long long>(s - c * (1ll << 32));
        digits[d + 1] += static_cast<unsigned long long>(c);
      }
    sync();
  }
  const unsigned seen = warp_finish<T>(carry, digits);
  if (t % 32 == 0 && seen != 0) atomicOr(&misc[0], seen);
  sync();
  const unsigned flags = misc[0];
  write_result<T, Out, kMean>(digits, flags, length, out);
  sync();  // digits and misc are reused by the next piece
}

// redo_piece for a kernel that sums pieces again itself (reduceLongPieces): the whole block, with
// digits of its own in shared memory.
template <class T, class Sem>
__device__ __forceinline__ void redo_piece_in_block(rl::gmem<const T> x, std::uint64_t stride, std::uint64_t length,
                                                    rl::gmem<typename Sem::Out> out) {
  __shared__ unsigned long long digit_storage[ExactTraits<T>::kDigits];
  __shared__ unsigned misc_storage[1];  // the piece's flags
  redo_piece<T, typename Sem::Out, Sem::kMean>(x, stride, length, digit_storage, misc_storage, out);
}

// Block b's share of the pieces listed in `redo` (`listed`: the count the block read, once the
// kernels that list have ended): listed pieces b, b + gridDim.x, ..., or every one of the call's
// `count` pieces when more were listed than the list holds. redo_one(p) sums piece p again; the
// whole block calls it (reduceRedoPieces, and reduceLongPieces where it ends the call).
template <class RedoOne>
__device__ __forceinline__ void for_listed_pieces(unsigned long long listed, std::uint64_t count,
                                                  rl::gmem<unsigned long long> redo, RedoOne redo_one) {
  const bool every = listed > redo_slots();
  const std::uint64_t todo = every ? count : listed;
  for (std::uint64_t i = blockIdx.x; i < todo; i += gridDim.x) redo_one(every ? i : static_cast<std::uint64_t>(redo[2 + i]));
}

// Launch with kThreads threads and any grid, after the kernels that listed pieces in `redo`:
// block b sums listed pieces b, b + gridDim.x, ... exactly (redo_piece), or every piece when the
// list overflowed; the last block clears the list. On an empty list (every block reads the same
// count: the kernels that list have ended) each block leaves at once, with no ticket to take.
template <class T, class Out, bool kMean>
__global__ void __launch_bounds__(kThreads)
    reduceRedoPieces(rl::gmem<const T> input, Pieces pieces, rl::gmem<const std::int64_t> begin,
                     rl::gmem<const std::int64_t> end, rl::gmem<unsigned long long> redo, rl::gmem<Out> output) {
  __shared__ unsigned long long digit_storage[ExactTraits<T>::kDigits];
  rl::smem<unsigned long long> digits = digit_storage;
  __shared__ unsigned misc_storage[1];  // the piece's flags
  rl::smem<unsigned> misc = misc_storage;
  __shared__ unsigned long long listed_storage[1];
  rl::smem<unsigned long long> listed_at = listed_storage;
  wait_for_producer();
  // One read of the count per block, shared: every thread of the block walks the same pieces,
  // and no thread reads the count after the last block has cleared it.
  if (threadIdx.x == 0) listed_at[0] = redo[0];
  __syncthreads();
  const unsigned long long listed = listed_at[0];
  if (listed == 0) return;
  for_listed_pieces(listed, pieces.count, redo, [=](std::uint64_t p) {
    std::uint64_t first = 0, length = 0;
    piece_extent(pieces, begin, end, p, &first, &length);
    redo_piece<T, Out, kMean>(input + first, pieces.stride, length, digits, misc, output + p);
  });
  if (threadIdx.x == 0) {
    __threadfence();
    if (atomicAdd(&redo[1], 1ull) == gridDim.x - 1ull) {
      redo[0] = 0ull;
      redo[1] = 0ull;
    }
  }
}

// ---- Lost pieces summed again by the block that wrote them --------------------------------------
// A kernel whose last block writes every piece (reduceNarrowColumns) sums a piece whose pair lost
// part of its sum again in that block, right after writing the others, so that the call needs no
// reduceRedoPieces launch after it: on an H200 that launch, even on an empty list, cost 8-9 us
// after the few-columns kernel (docs/performance.md). reduceColumns keeps the list: the same code
// in it took the exact float columns' kernel from 80 to 106 registers.

#if RL_SIMT
// Pieces the blocks summed again themselves since the SIMT runner last cleared it (its tests count them).
inline std::atomic<std::uint64_t> simt_redone_in_blocks{0};
#endif

// A block's list of its lost columns (of exact semantics Sem), in shared memory: list() from any
// thread; run() from every thread, once, after a barrier that follows the last list().
template <class Sem>
struct BlockRedo {
  rl::smem<unsigned long long> digits;  // ExactTraits<Sem::Value>::kDigits
  rl::smem<unsigned> misc;              // [0] the piece's flags, [1] pieces listed
  rl::smem<unsigned long long> listed;  // as many as the block may list
  __device__ __forceinline__ void clear() {
    if (threadIdx.x == 0) misc[1] = 0u;
  }
  __device__ __forceinline__ void list(std::uint64_t p) { listed[atomicAdd(&misc[1], 1u)] = p; }
  // Sums the listed columns again once: column c is x[c], x[c + stride], ... (`length` elements).
  __device__ inline void run(rl::gmem<const typename Sem::Value> x, std::uint64_t stride, std::uint64_t length,
                             rl::gmem<typename Sem::Out> output) {
    const unsigned n = misc[1];
    for (unsigned i = 0; i < n; ++i) {
      const std::uint64_t c = listed[i];
      redo_piece<typename Sem::Value, typename Sem::Out, Sem::kMean>(x + c, stride, length, digits, misc, output + c);
    }
#if RL_SIMT
    if (threadIdx.x == 0) simt_redone_in_blocks += n;
#endif
  }
};

// Writes piece p's result, or lists it in the block's own list.
template <class Sem>
__device__ __forceinline__ void store_piece(rl::gmem<typename Sem::Out> output, std::uint64_t p,
                                            const typename Sem::Acc& v, std::uint64_t length, BlockRedo<Sem>& here) {
  store_or_list<Sem>(output, p, v, length, [&](std::uint64_t q) { here.list(q); });
}

}  // namespace reducelab::detail
