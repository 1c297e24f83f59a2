#pragma once
// The kernels of a matrix's columns (axis 0): reduceColumns, reduceNarrowColumns,
// reduceHalfColumns, reduceHalfColumnExtrema and reduceHalfColumnBands (agent_segments.cuh has
// the map of every kernel). Read by nvcc and by g++ (SIMT).
#include <algorithm>
#include <cstdint>

#include "reducelab/detail/exact_half.cuh"
#include "segments/agent_pieces.cuh"

namespace reducelab::detail {

// ---- Columns of an order-free operation, read coalesced ----------------------------------------
// Integer sums and products, min, max, argmin, argmax and exact pairs give the same bits in any order, so a
// matrix's columns (axis 0) need not follow the fixed order of each column: a warp reads W
// neighbouring columns (W = min(cols, 32)) of 32 / W neighbouring rows at once, every lane one
// element, so a row's columns come in as one coalesced load instead of one sector per element.
// When there are at least as many groups of 32 columns as resident warps (a few hundred rows of
// a million columns), a warp takes a whole group and its lanes write their columns' results: the
// block's fold and store of every 32 columns measured slower than reading them. Otherwise the
// rows are cut into bands; a block takes a (column group, band) job, its 8 warps folding
// interleaved rows, 8 loads in flight per thread; the block folds its warps' partials per column
// in shared memory. With one band the block writes the results; with more, each band's partials
// go to the workspace and the block that takes the group's last ticket folds them, all its
// threads at once.
struct ColumnShape {
  std::uint64_t cols = 0, rows = 0, pitch = 0;
  unsigned width = 1;        // W: columns per warp
  unsigned phases = 1;       // 32 / W rows per warp step
  std::uint64_t groups = 0;  // ceil(cols / W)
  std::uint64_t bands = 1;
  std::uint64_t band_rows = 0;
  bool warp_per_group = false;  // many groups of 32 columns: a warp folds a whole group alone
};

// The most partials and group tickets a columns launch uses (the workspace's pieces area).
inline constexpr std::uint64_t kColumnJobs = 2048;

// The most jobs whose 32 partials of Acc each the workspace holds: kColumnJobs for accumulators
// of up to 16 bytes, half as many for PairSum's two pairs.
template <class Acc>
inline constexpr std::uint64_t kColumnJobsOf =
    kPiecePartialBytes / (32 * sizeof(Acc)) < kColumnJobs ? kPiecePartialBytes / (32 * sizeof(Acc)) : kColumnJobs;

// Whether Acc is exact sums' pair (ExactPair), or several columns' pairs (VecColumns, PairSum).
template <class Acc>
inline constexpr bool exact_pair_acc_v =
    std::is_same_v<Acc, ExactPair> ||
    requires(Acc& a) { requires std::is_same_v<std::remove_cvref_t<decltype(a.c[0])>, ExactPair>; };

// Jobs a block to begin with: two; one for exact sums, whose partials cost the group's last block
// an exact merge each, so that it folds half as many (H200, exact float sums along 2^20 x 256,
// the kernel alone: two floats a lane, 198 bands 259.9 us, 99 bands 249.0; a column a lane, 132
// bands 262.9, 66 bands 257.4; doubles 481.5 -> 477.4; bench/colvec_probe's `bands` mode).
template <class Acc>
inline constexpr std::uint64_t kColumnJobsPerBlock = exact_pair_acc_v<Acc> ? 1 : 2;

// `blocks` and `warps`: how many blocks and warps the launch keeps resident. With at least as many
// groups of 32 columns as warps, a warp takes a whole group (every row) and writes its columns,
// with no block fold. Otherwise the rows are cut into bands, kColumnJobsPerBlock jobs a block to
// begin with; blocks take jobs b, b + blocks, ..., so a launch lasts about as long as the most
// jobs one block takes times a band's rows. Of the band counts from half to twice that first one,
// the one with the least of that product is taken, the first one unless another is strictly less:
// 256 groups of half words on 396 blocks took 4 bands (three jobs for some blocks, two for
// others: 3/4 of the rows) and take 3 (two jobs at most: 2/3). The bands are capped at the jobs
// whose partials (Acc) the workspace holds.
template <class Acc>
inline ColumnShape column_shape(const Pieces& p, std::uint64_t blocks, std::uint64_t warps) {
  constexpr std::uint64_t most_jobs = kColumnJobsOf<Acc>;
  if (blocks < 1) blocks = 1;
  const std::uint64_t wanted_jobs = kColumnJobsPerBlock<Acc> * blocks;
  const std::uint64_t target_jobs = wanted_jobs < most_jobs ? wanted_jobs : most_jobs;
  ColumnShape s;
  s.cols = p.count, s.rows = p.length, s.pitch = p.stride;
  s.width = static_cast<unsigned>(s.cols < 32 ? s.cols : 32);
  s.phases = 32 / s.width;
  s.groups = (s.cols + s.width - 1) / s.width;
  if (s.width == 32 && s.groups >= warps) {
    s.warp_per_group = true;
    s.band_rows = s.rows;
    return s;
  }
  const std::uint64_t step = std::uint64_t(kWarps) * s.phases * 8;  // rows a block covers per 8 loads
  const std::uint64_t most_by_rows = (s.rows + step - 1) / step;
  std::uint64_t most_bands = most_jobs / s.groups < most_by_rows ? most_jobs / s.groups : most_by_rows;
  if (most_bands < 1) most_bands = 1;
  std::uint64_t bands = s.groups >= target_jobs ? 1 : (target_jobs + s.groups - 1) / s.groups;
  if (bands > most_bands) bands = most_bands;
  // The most jobs one block takes with b bands (the launch's length is that over b).
  const auto rounds = [&](std::uint64_t b) { return (s.groups * b + blocks - 1) / blocks; };
  const std::uint64_t first = bands;
  for (std::uint64_t b = (first + 1) / 2; b <= 2 * first && b <= most_bands; ++b)
    if (rounds(b) * bands < rounds(bands) * b) bands = b;
  // Bands of whole block steps: a warp's load then covers `phases` rows that start a 128-byte line
  // (dense rows of W columns). Bands of 63551 rows (2^26 x 4 on 1056 blocks) put every load of
  // a band but the first across two lines: float maxima along 2^26 x 4 took 300.5 us against
  // 249.1 with bands of 32768 rows (H200).
  s.band_rows = ((s.rows + bands - 1) / bands + step - 1) / step * step;
  s.bands = (s.rows + s.band_rows - 1) / s.band_rows;
  return s;
}

// The blocks a launch of `shape` can use: one per job of bands, or kWarps groups per block when
// a warp takes a whole group.
inline std::uint64_t column_blocks(const ColumnShape& s) {
  return s.warp_per_group ? (s.groups + kWarps - 1) / kWarps : s.groups * s.bands;
}

// Whether reduceColumns takes this call: an order-free operation along axis 0 with columns of
// more than one vector (shorter ones go to reduceTinyPieces, already coalesced).
template <class T, class Sem>
inline bool columns_fit(const Pieces& p) {
  return Sem::order_free && !p.offsets && p.stride > 1 && p.length > Shape<T>::kVec;
}

// ---- Min and max of 16-bit float columns, two columns to a lane --------------------------------
// A lane of reduceColumns reads one element of each row, so a warp takes 64 bytes of a row per
// load for 16-bit elements. Read that way a 16384 x 16384 matrix of 2-byte elements came in at 66 %
// of the read ceiling on an H100, at 4 bytes a lane 92 %, at 16 bytes 99 % (bench/columns_probe):
// the 64-byte pieces of rows 32 KiB apart cost the DRAM more than the bytes. So the min and max of
// half and bfloat16 columns read the matrix as 32-bit words, two neighbouring columns a word, and
// run reduceColumns over the words with PairExtremum: both columns' order keys in one word (as
// Extremum::absorb_batch makes them), their largest and smallest keys kept with the 16x2 max and
// min. A NaN's key lies beyond the infinities' keys, so the two extremes also tell whether a column
// saw one. The results are Extremum's, bit for bit.
template <class T>
struct ColumnPair {
  T v[2];
};

template <class T, bool kMax>
  requires is_half_like<T>
struct PairExtremum {
  using Acc = std::uint64_t;  // the largest keys of the word's two columns (low half), the smallest (high half)
  using Inner = Acc;
  using Out = ColumnPair<T>;
  static constexpr bool order_free = true;
  static constexpr bool has_atomic_combine = false;
  RL_HD_INLINE static Acc pack(std::uint32_t most, std::uint32_t least) { return std::uint64_t(least) << 32 | most; }
  RL_HD_INLINE static Acc identity() { return pack(0x80008000u, 0x7fff7fffu); }
  RL_HD_INLINE static Inner inner_identity() { return identity(); }
  RL_HD_INLINE static Inner lift(std::uint32_t w, std::uint64_t) {
    const std::uint32_t k = keys16x2(w);
    return pack(k, k);
  }
  RL_HD_INLINE static Acc combine(Acc a, Acc b) {
    return pack(extreme_s16x2<true>(static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(b)),
                extreme_s16x2<false>(static_cast<std::uint32_t>(a >> 32), static_cast<std::uint32_t>(b >> 32)));
  }
  RL_HD_INLINE static Acc inner_combine(Acc a, Acc b) { return combine(a, b); }
  RL_HD_INLINE static Acc absorb(Acc a, Acc b) { return combine(a, b); }
  RL_HD_INLINE static Out finish(Acc a, std::uint64_t n) {
    using Column = Extremum<T, kMax>;
    using Key = typename Column::Key;
    Out o;
    for (unsigned j = 0; j < 2; ++j) {
      const Key hi = static_cast<std::int16_t>(static_cast<std::uint32_t>(a) >> (16 * j));
      const Key lo = static_cast<std::int16_t>(static_cast<std::uint32_t>(a >> 32) >> (16 * j));
      o.v[j] = Column::finish(Column::saw_nan(hi, lo) ? Column::nan_key() : kMax ? hi : lo, n);
    }
    return o;
  }
};

// ---- Exact sums and means of 16-bit float columns, two columns to a lane ----------------------
// Read the same way for the same reason: a lane takes a word of two neighbouring columns per row
// and folds each half in its own window and pair (bfloat16) or plain double and pair (half; the
// RunningFolds below), so a warp reads 128 bytes of a row per load. A pair that lost part of its
// sum lists its column, not the word, for the redo (store_piece). Exact sums have one answer in
// any grouping: the bits are the one-column kernel's. Only from 16 columns (pair_columns_fit).
template <class T, class Sem>
  requires(is_half_like<T> && is_exact_pieces<Sem>::value)
struct PairSum {
  using Column = Sem;  // one column's semantics (store_piece lists lost columns with it)
  static constexpr unsigned kColumnLoads = 16;  // loads in flight a thread (reduceColumns)
  struct Acc {
    static constexpr unsigned kColumns = 2;  // loaded a column at a time (load_other_block)
    typename Sem::Acc c[2];
  };
  using Inner = Acc;
  using Out = ColumnPair<typename Sem::Out>;
  static constexpr bool order_free = true;
  static constexpr bool has_atomic_combine = false;
  RL_HD_INLINE static Acc identity() { return Acc{{Sem::identity(), Sem::identity()}}; }
  RL_HD_INLINE static Inner inner_identity() { return identity(); }
  RL_HD_INLINE static Acc combine(Acc a, Acc b) { return Acc{{Sem::combine(a.c[0], b.c[0]), Sem::combine(a.c[1], b.c[1])}}; }
  RL_HD_INLINE static Acc inner_combine(Acc a, Acc b) { return combine(a, b); }
  RL_HD_INLINE static Acc absorb(Acc a, Acc b) { return combine(a, b); }
  __device__ __forceinline__ static Out finish(Acc a, std::uint64_t n) { return Out{{finish_column(a.c[0], n), finish_column(a.c[1], n)}}; }
  // One column's result, out of line: inlined twice, the mean's division took the kernel from 74
  // to 94 registers.
  __device__ __noinline__ static typename Sem::Out finish_column(typename Sem::Acc a, std::uint64_t n) {
    return Sem::finish(a, n);
  }
};

// A lane's fold of its words: RunningFold's window and pair for each column, the low halves (the
// even column) and the high halves (the odd one) kept apart. The batch's magnitude ranges come
// from the words themselves: the 16x2 max and min leave each column's in its own half. (Splitting
// the words into two arrays of elements for two RunningFolds took 122 registers.)
template <class T, class Sem>
struct RunningFold<std::uint32_t, PairSum<T, Sem>> {
  using Acc = typename PairSum<T, Sem>::Acc;
  ColumnWindow<T, Sem> col[2];
  int span = 0;

  __device__ __forceinline__ explicit RunningFold(std::uint64_t most) : span(window_span<T>(most)) {}
  template <unsigned N, class IndexOf>
  __device__ __forceinline__ void take(const std::uint32_t* word, IndexOf) {
    std::uint32_t most2 = 0, least2 = 0xffffffffu;
    double s[2] = {-0.0, -0.0};
#pragma unroll
    for (unsigned k = 0; k < N; ++k) {
      const std::uint32_t m = word[k] & 0x7fff7fffu;
      most2 = max_u16x2(most2, m);
      least2 = min_u16x2(least2, sub_u16x2(m, 0x00010001u));  // zeros wrap to 0xffff
#pragma unroll
      for (unsigned j = 0; j < 2; ++j) s[j] += static_cast<double>(widen(element(word[k], j)));
    }
#pragma unroll
    for (unsigned j = 0; j < 2; ++j) {
      const std::uint32_t least = least2 >> (16 * j) & 0xffffu;
      const WindowSum batch{s[j], most2 >> (16 * j) & 0xffffu, least == 0xffffu ? 0xffffffffu : least};
      if (col[j].take(batch, span)) continue;
#pragma unroll
      for (unsigned k = 0; k < N; ++k) col[j].acc = add_one(col[j].acc, element(word[k], j));
    }
  }
  __device__ __forceinline__ void take_one(std::uint32_t word, std::uint64_t index) {
    take<1>(&word, [&](unsigned) { return index; });
  }
  __device__ __forceinline__ Acc result() {
    col[0].flush();
    col[1].flush();
    return Acc{{col[0].acc, col[1].acc}};
  }

 private:
  RL_HD_INLINE static T element(std::uint32_t word, unsigned j) {
    T x;
    x.bits = static_cast<std::uint16_t>(word >> (16 * j));
    return x;
  }
  // The rare path (a wide exponent range, an infinity or NaN): one element into the pair, out of
  // line; inlined, sixteen copies of the pair's addition took the kernel from 77 to 128 registers.
  __device__ __noinline__ static typename Sem::Acc add_one(typename Sem::Acc a, T x) {
    return Sem::combine(a, Sem::lift(x, 0));
  }
};

// Half columns: a plain double chain per column and no window (HalfChains, exact_pieces.cuh).
template <class Sem>
struct RunningFold<std::uint32_t, PairSum<half, Sem>> {
  using Acc = typename PairSum<half, Sem>::Acc;
  HalfChains<Sem, 2> chains;  // the low halves' column, the high halves'

  __device__ __forceinline__ explicit RunningFold(std::uint64_t) {}
  template <unsigned N, class IndexOf>
  __device__ __forceinline__ void take(const std::uint32_t* word, IndexOf) {
    chains.template make_room<N>();
#pragma unroll
    for (unsigned k = 0; k < N; ++k) {
      half lo, hi;
      lo.bits = static_cast<std::uint16_t>(word[k]);
      hi.bits = static_cast<std::uint16_t>(word[k] >> 16);
      chains.add(0, lo);
      chains.add(1, hi);
    }
  }
  __device__ __forceinline__ void take_one(std::uint32_t word, std::uint64_t index) {
    take<1>(&word, [&](unsigned) { return index; });
  }
  __device__ __forceinline__ Acc result() { return Acc{{chains.result(0), chains.result(1)}}; }
};

// The min, max, sum or mean of half or bfloat16 (Op) along axis 0, when the columns pair up into
// aligned 32-bit words: an even count of columns, an even pitch, the input 4-byte aligned (and,
// for sums and means, at least 16 columns: pair_columns_fit).
template <class T, class Op>
inline constexpr bool pair_columns_v =
    is_half_like<T> && (std::is_same_v<Op, op::min> || std::is_same_v<Op, op::max> ||
                        std::is_same_v<Op, op::sum> || std::is_same_v<Op, op::mean>);
template <class T, class Op>
struct PairColumns {
  using type = PairSum<T, ExactPieceSemantics<T, Op>>;
};
template <class T>
struct PairColumns<T, op::min> {
  using type = PairExtremum<T, false>;
};
template <class T>
struct PairColumns<T, op::max> {
  using type = PairExtremum<T, true>;
};
template <class T, class Op>
using pair_columns_t = typename PairColumns<T, Op>::type;
// Sums and means pair only from 16 columns: on an H100, two columns a lane made half sums over
// 16384 x 16384, 256 x 2^20, 2^20 x 256, 2^23 x 32 and 2^24 x 16 10-19 % faster, but 2^25 x 8 2 %
// and 2^26 x 4 18 % slower (docs/performance.md).
template <class Op>
inline bool pair_columns_fit(const void* input, const Pieces& p) {
  const bool sums = std::is_same_v<Op, op::sum> || std::is_same_v<Op, op::mean>;
  return p.count % 2 == 0 && p.stride % 2 == 0 && reinterpret_cast<std::uintptr_t>(input) % 4 == 0 &&
         (!sums || p.count >= 16);
}
// The same columns as vectors of k neighbouring columns (words of two half columns, or
// VecColumns' vectors below): a k-th as many, the pitch in vectors.
inline Pieces column_vector_pieces(const Pieces& p, unsigned k) {
  Pieces w = p;
  w.count = p.count / k;
  w.stride = p.stride / k;
  w.elements = p.elements / k;
  return w;
}

// ---- Columns of 4- and 8-byte elements, several of them to a lane -------------------------------
// A lane of reduceColumns that reads one float of each row puts 128 bytes of a row in a warp's
// load: float and int32 maxima and sums along the columns of 16384 x 16384 read 88 % of the read
// ceiling where double maxima (8 bytes a lane) read 97 % (H200 shapes run), and bench/columns_probe
// read 16-byte lanes at 99 % where 4-byte lanes read 92 % (H100). So when the columns split into
// aligned vectors of K neighbouring columns (a count and a pitch that are multiples of K, a start
// aligned to the vector), reduceColumns can run over the vectors: a lane keeps one accumulator a
// column and writes K results. K: a 16-byte vector for the order-free operations other than exact
// sums (also four words of two half columns' minima and maxima); two floats for exact float sums
// and means (each column keeps a window and a pair). Any order gives these operations' bits, so
// each column's result is the one-column kernel's. Where vectors read faster: vec_columns_pay.
template <class T, class Sem, unsigned kK>
struct VecColumnsBase {
  static constexpr unsigned K = kK;
  using Vec = Neighbours<T, K>;
  struct Acc {
    static constexpr unsigned kColumns = K;  // loaded a column at a time (load_other_block)
    typename Sem::Acc c[K];
  };
  struct Inner {
    typename Sem::Inner c[K];
  };
  struct Out {
    typename Sem::Out c[K];
  };
  static constexpr bool order_free = true;
  static constexpr bool has_atomic_combine = false;
  // R (Acc, Inner or Out) whose column j is f(j): each operation, column by column.
  template <class R, class F>
  RL_HD_INLINE static R each(F f) {
    R r;
#pragma unroll
    for (unsigned j = 0; j < K; ++j) r.c[j] = f(j);
    return r;
  }
  RL_HD_INLINE static Acc identity() { return each<Acc>([](unsigned) { return Sem::identity(); }); }
  RL_HD_INLINE static Inner inner_identity() { return each<Inner>([](unsigned) { return Sem::inner_identity(); }); }
  RL_HD_INLINE static Inner lift(const Vec& x, std::uint64_t index) {
    return each<Inner>([&](unsigned j) { return Sem::lift(x.v[j], index); });
  }
  RL_HD_INLINE static Acc combine(const Acc& a, const Acc& b) {
    return each<Acc>([&](unsigned j) { return Sem::combine(a.c[j], b.c[j]); });
  }
  RL_HD_INLINE static Inner inner_combine(const Inner& a, const Inner& b) {
    return each<Inner>([&](unsigned j) { return Sem::inner_combine(a.c[j], b.c[j]); });
  }
  RL_HD_INLINE static Acc absorb(const Acc& a, const Inner& b) {
    return each<Acc>([&](unsigned j) { return Sem::absorb(a.c[j], b.c[j]); });
  }
};
template <class T, class Sem, bool kExact = is_exact_pieces<Sem>::value>
struct VecColumns : VecColumnsBase<T, Sem, 16 / sizeof(T)> {
  using Base = VecColumnsBase<T, Sem, 16 / sizeof(T)>;
  RL_HD_INLINE static typename Base::Out finish(const typename Base::Acc& a, std::uint64_t n) {
    return Base::template each<typename Base::Out>([&](unsigned j) { return Sem::finish(a.c[j], n); });
  }
};
// Exact sums and means: Column names one column's semantics, so that store_piece lists a lost
// pair's column for the redo, not the vector.
template <class T, class Sem>
struct VecColumns<T, Sem, true> : VecColumnsBase<T, Sem, 2> {
  using Base = VecColumnsBase<T, Sem, 2>;
  using Column = Sem;
  __device__ __forceinline__ static typename Base::Out finish(const typename Base::Acc& a, std::uint64_t n) {
    return Base::template each<typename Base::Out>([&](unsigned j) { return finish_column(a.c[j], n); });
  }
  // Out of line, as PairSum's: inlined per column, the mean's division costs the loop registers.
  __device__ __noinline__ static typename Sem::Out finish_column(typename Sem::Acc a, std::uint64_t n) {
    return Sem::finish(a, n);
  }
};

// A lane's fold of exact float sums over its vectors: one RunningFold (window and pair) a column,
// each batch's elements of a column taken together.
template <class T, class Sem>
  requires is_exact_pieces<Sem>::value
struct RunningFold<Neighbours<T, 2>, VecColumns<T, Sem, true>> {
  using V = VecColumns<T, Sem, true>;
  RunningFold<T, Sem> col[2];
  __device__ __forceinline__ explicit RunningFold(std::uint64_t most) : col{RunningFold<T, Sem>(most), RunningFold<T, Sem>(most)} {}
  template <unsigned N, class IndexOf>
  __device__ __forceinline__ void take(const Neighbours<T, 2>* v, IndexOf index_of) {
#pragma unroll
    for (unsigned j = 0; j < 2; ++j) {
      T e[N];
#pragma unroll
      for (unsigned k = 0; k < N; ++k) e[k] = v[k].v[j];
      col[j].template take<N>(e, index_of);
    }
  }
  __device__ __forceinline__ void take_one(Neighbours<T, 2> x, std::uint64_t index) {
    col[0].take_one(x.v[0], index);
    col[1].take_one(x.v[1], index);
  }
  __device__ __forceinline__ typename V::Acc result() { return typename V::Acc{{col[0].result(), col[1].result()}}; }
};

// Whether T's columns under Sem may take VecColumns: order-free operations on elements of 4 or 8
// bytes other than exact sums, argmin and argmax (and the words of two half columns' minima and
// maxima: PairExtremum), and exact float sums and means. (Four argmin
// accumulators, each a key and a 64-bit index, took float columns to 118 registers, and two
// spilled for doubles.)
template <class T, class Sem>
inline constexpr bool vec_columns_v =
    Sem::order_free && !is_half_like<T> && !two_columns_v<Sem> && !requires(typename Sem::Acc a) { a.index; } &&
    (is_exact_pieces<Sem>::value ? std::is_same_v<T, float> : sizeof(T) == 4 || sizeof(T) == 8);
// And whether these columns can: whole aligned vectors.
template <class T, class Sem>
inline bool vec_columns_fit(const void* input, const Pieces& p) {
  constexpr unsigned K = VecColumns<T, Sem>::K;
  return p.count % K == 0 && p.stride % K == 0 && reinterpret_cast<std::uintptr_t>(input) % (K * sizeof(T)) == 0;
}
// And whether they read faster so, given the vectors' launch shape (column_shape). Vectors make a
// K-th as many groups, so a few groups of many rows take many bands, and the last block's fold of
// a group's bands (256 / W threads a column, four loads in flight, bands / slices round trips a
// thread) grew past what the wider loads save; and a warp that takes a whole group of vectors reads
// K times as many bytes of each row, in as many round trips as before. bench/colvec_probe (H200,
// cold, median of 10), µs, a column a lane against vectors: float max along 2^20 x 256 258.2
// against 267.3 (2 groups x 512 bands; 258.0 on 256 bands), int32 max 255.7 against 279.1, half
// max 134.9 against 151.8; a warp a group, along 256 x 2^20: int32 max 252.6 against 260.3, double
// max 493.6 against 510.1, half max 127.1 against 138.5, but exact float sums 263.3 against 257.4.
// Where the bands stay few the vectors win: 16384 x 16384 exact float sums 274.9 against 258.8,
// int32 max 251.4 against 249.0; 2^24 x 16 float max 262.4 against 254.3. So vectors are taken on
// bands of at most kFoldPartials partials a thread of that fold, and a warp a group only for exact
// sums. Nor are four words of half or bfloat16 minima and maxima where a word a lane would give
// each warp a whole group (`lanes_warp_a_group`; the launchers pass it for words only): along 256
// x 2^20 the four words make 4096 groups of one band, a sixth of them in the 792 blocks' last
// round (138.5 us against 127.1 a word a lane, a warp a group). Float maxima's vectors on the same
// shape (8192 groups on 1056 blocks) were as fast as a column a lane (252.3 against 254.7), and
// in `reducelab bench` 1.3 points of the read ceiling faster, so 4- and 8-byte columns keep them.
inline constexpr std::uint64_t kFoldPartials = 32;
template <class Sem>
inline bool vec_columns_pay(const ColumnShape& s, bool lanes_warp_a_group) {
  if (s.warp_per_group || lanes_warp_a_group) return two_columns_v<Sem>;
  return s.bands <= kFoldPartials * (kThreads / s.width);
}

// The fold of partials[b * width] over bands b = slice, slice + slices, ... < bands, four loads in
// flight. Out of line: inlined, its registers pushed the exact sums' main loop into spills.
template <class Sem>
__device__ __noinline__ typename Sem::Acc fold_band_partials(rl::gmem<typename Sem::Acc> partials, unsigned width,
                                                             unsigned slice, unsigned slices, std::uint64_t bands) {
  using Acc = typename Sem::Acc;
  Acc part = Sem::identity();
  std::uint64_t b = slice;
  for (; b + 3 * slices < bands; b += 4 * slices) {
    Acc q[4];
#pragma unroll
    for (unsigned k = 0; k < 4; ++k) q[k] = load_other_block(partials, (b + k * slices) * width);
#pragma unroll
    for (unsigned k = 0; k < 4; ++k) part = Sem::combine(part, q[k]);
  }
  for (; b < bands; b += slices) part = Sem::combine(part, load_other_block(partials, b * width));
  return part;
}

// Loads in flight per thread: 16 for two-column exact sums of 16-bit floats (PairSum), whose two
// folds hold more registers, so fewer warps are resident to cover the latency; 8 for the rest
// (exact float sums two columns a lane took 120 registers with 16).
template <class Sem>
inline constexpr unsigned kColumnLoads = 8;
template <class Sem>
  requires requires { Sem::kColumnLoads; }
inline constexpr unsigned kColumnLoads<Sem> = Sem::kColumnLoads;

// Loads in flight a thread where a warp takes a whole group (ColumnShape::warp_per_group), whose
// warps fold every row of their columns with no bands to share the latency: 16 for exact float
// sums two floats a lane (126 registers, two blocks an SM), whose bands keep 8. H200, the kernel
// alone, bench/colvec_probe's `loads` mode: along 256 x 2^20 (a warp a group) 253.5 and 254.9 us
// with 8, 242.0 and 242.3 with 16; with 16 in bands, 2^20 x 256 249.5 and 254.0 against 249.1
// and 250.5, 16384 x 16384 250.4 and 250.8 against 252.5 and 251.9.
template <class Sem>
inline constexpr unsigned kWarpGroupLoads =
    exact_pair_acc_v<typename Sem::Acc> && !std::is_same_v<typename Sem::Acc, ExactPair> && kColumnLoads<Sem> < 16
        ? 16
        : kColumnLoads<Sem>;

// (kLoads: kWarpGroupLoads<Sem> where a warp takes a whole group, other counts for bench/colvec_probe.)
template <class T, class Sem, unsigned kLoads = kColumnLoads<Sem>>
__global__ void __launch_bounds__(kThreads)
    reduceColumns(rl::gmem<const T> input, ColumnShape shape, rl::gmem<typename Sem::Acc> partials,
                  rl::gmem<unsigned> tickets, rl::gmem<typename Sem::Out> output, rl::gmem<unsigned long long> redo) {
  using Acc = typename Sem::Acc;
  __shared__ Acc lane_storage[kThreads];
  rl::smem<Acc> lanes = lane_storage;
  __shared__ unsigned last_storage[1];
  rl::smem<unsigned> am_last = last_storage;
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const unsigned width = shape.width, phases = shape.phases;
  const bool active = lane < width * phases;
  const unsigned column_in_group = lane % width, phase = lane / width;
  const std::uint64_t jobs = shape.groups * shape.bands;
  const std::uint64_t step = std::uint64_t(kWarps) * phases;  // rows between one thread's loads

  if (shape.warp_per_group) {  // lane l folds column 32 g + l over every row and writes it
    for (std::uint64_t g = std::uint64_t(blockIdx.x) * kWarps + warp; g < shape.groups;
         g += std::uint64_t(gridDim.x) * kWarps) {
      const std::uint64_t column = g * 32 + lane;
      if (column >= shape.cols) continue;
      RunningFold<T, Sem> run(shape.rows);
      std::uint64_t r = 0;
      for (; r + kLoads <= shape.rows; r += kLoads) {
        T x[kLoads];
#pragma unroll
        for (unsigned k = 0; k < kLoads; ++k) x[k] = input[(r + k) * shape.pitch + column];
        run.template take<kLoads>(x, [&](unsigned k) { return r + k; });
      }
      for (; r < shape.rows; ++r) run.take_one(input[r * shape.pitch + column], r);
      store_piece<Sem>(output, column, run.result(), shape.rows, redo);
    }
    return;
  }
  for (std::uint64_t job = blockIdx.x; job < jobs; job += gridDim.x) {
    // Jobs that run at once take neighbouring groups of the same band, so the launch reads whole
    // rows at a time. Dealt group by group (every band of group 0, then of group 1, ...), exact
    // half sums along the columns of 2^20 x 256 (four groups of words) took 167.1 us, and 157.2
    // dealt this way (H200, docs/performance.md).
    const std::uint64_t band = job / shape.groups, group = job % shape.groups;
    const std::uint64_t column = group * width + column_in_group;
    const bool mine = active && column < shape.cols;
    const std::uint64_t row_begin = band * shape.band_rows;
    const std::uint64_t row_end = row_begin + shape.band_rows < shape.rows ? row_begin + shape.band_rows : shape.rows;
    RunningFold<T, Sem> run((row_end - row_begin) / step + 1);  // the most one thread takes
    if (mine) {
      std::uint64_t r = row_begin + std::uint64_t(warp) * phases + phase;
      for (; r + (kLoads - 1) * step < row_end; r += kLoads * step) {
        T x[kLoads];
#pragma unroll
        for (unsigned k = 0; k < kLoads; ++k) x[k] = input[(r + k * step) * shape.pitch + column];
        run.template take<kLoads>(x, [&](unsigned k) { return r + k * step; });
      }
      for (; r < row_end; r += step) run.take_one(input[r * shape.pitch + column], r);
    }
    lanes[threadIdx.x] = run.result();
    __syncthreads();
    Acc total = Sem::identity();
    if (threadIdx.x < width) {  // this block's fold of column group * width + threadIdx.x
      for (unsigned w = 0; w < kWarps; ++w)
        for (unsigned ph = 0; ph < phases; ++ph) total = Sem::combine(total, lanes[w * 32 + ph * width + threadIdx.x]);
    }
    const std::uint64_t out_column = group * width + threadIdx.x;
    if (shape.bands == 1) {
      if (threadIdx.x < width && out_column < shape.cols) store_piece<Sem>(output, out_column, total, shape.rows, redo);
      __syncthreads();  // lanes is reused by the next job
      continue;
    }
    if (threadIdx.x < width) partials[(group * shape.bands + band) * width + threadIdx.x] = total;
    __syncthreads();  // every partial written before thread 0's ticket (its release publishes them)
    if (threadIdx.x == 0) am_last[0] = take_ticket(tickets + group) == shape.bands - 1 ? 1u : 0u;
    __syncthreads();
    if (am_last[0] != 0) {  // the group's last band: fold the bands' partials
      // Every thread takes part: thread t folds column t % W of bands t / W, t / W + S, ... (S =
      // kThreads / W slices), four loads in flight, then thread c < W folds column c's slices.
      // One thread per column walking 2048 bands paid an L2 round trip per band.
      const unsigned slices = kThreads / width, slice = threadIdx.x / width, c = threadIdx.x % width;
      lanes[threadIdx.x] = slice < slices ? fold_band_partials<Sem>(partials + group * shape.bands * width + c, width,
                                                                    slice, slices, shape.bands)
                                          : Sem::identity();
      __syncthreads();
      if (threadIdx.x < width) {
        Acc all = Sem::identity();
        for (unsigned k = 0; k < slices; ++k) all = Sem::combine(all, lanes[k * width + threadIdx.x]);
        if (out_column < shape.cols) store_piece<Sem>(output, out_column, all, shape.rows, redo);
      }
      if (threadIdx.x == 0) tickets[group] = 0u;
    }
    __syncthreads();
  }
}

// ---- A few columns of exact half and float sums, read as one array ------------------------------
// reduceColumns gives each lane one column, so a matrix of 4 half columns is read 2 bytes a lane
// (4 bytes with two columns a lane), and every element takes a window step of its own column:
// 2^26 x 4 half sums along axis 0 ran at 50 % of the read ceiling (H200). When a 16-byte vector
// holds whole rows (a dense matrix whose columns divide the vector's elements, and a 16-byte
// aligned start), element j of every vector lies in column j % kCols: the threads read the
// matrix as one array, in units of kIn 16-byte vectors a thread (blocks take every gridDim.x-th
// unit), and each keeps kCols running sums (NarrowRuns), every column's elements of the kIn
// vectors taken as one batch. Exact sums give the same bits in any order. The block folds each
// column, posts kCols partials, and the block that takes the last ticket folds the posts, a warp
// a column, and writes the kCols results.
// Taken for 2, 4 and 8 half columns and 2 and 4 float columns (bench/narrow_probe, H200, cold,
// µs, against reduceColumns): 2^27 x 2 half 350 -> 131, 2^26 x 4 half 251 -> 135, 2^25 x 8 half
// 204 -> 152, 2^27 x 2 float 327 -> 245, 2^26 x 4 float 303 -> 254; and for rows of two or four
// vectors (against the column kernel the library took: two half columns a word, float columns
// two a lane or, for 8 columns, one): 2^24 x 16 half 174.8 -> 151.4, 2^23 x 32 half 172.4 ->
// 152.9, 2^25 x 8 float 287.9 -> 255.5, 2^24 x 16 float 284.1 -> 255.8. Before the last block's fold
// was spread over a warp per column it took 20-40 us of these launches, and 8 half columns and 4
// float columns were slower than reduceColumns. Each thread taking vectors t, t + threads, ...
// instead of units was as fast, except for 4 float columns, where it spilled (322 us).
// bfloat16 was not measured and keeps reduceColumns. Half columns have since moved to
// reduceHalfColumns (below), which adds them as integers.
template <class T, class Sem>
inline constexpr bool narrow_columns_v = window_sums_v<T, Sem> && std::is_same_v<T, float>;
// Rows of two vectors (8 float columns) or four (16): vector k holds columns (k % groups) * kVec to
// + kVec, and a thread that takes every 256th vector sees the same columns each time, so it keeps a
// running sum for each of kVec columns.
template <class T, class Sem>
inline bool narrow_columns_fit(const void* input, const Pieces& p) {
  constexpr std::uint64_t kVec = Shape<T>::kVec;
  const bool columns = p.count == 2 || p.count == 4 || p.count == 2 * kVec || p.count == 4 * kVec;
  return narrow_columns_v<T, Sem> && !p.offsets && columns && p.stride == p.count &&
         reinterpret_cast<std::uintptr_t>(input) % 16 == 0;
}
// The columns a thread keeps (kCols, or a vector's elements when rows are wider than a vector).
template <class T, unsigned kCols>
inline constexpr unsigned kNarrowHeld = kCols < Shape<T>::kVec ? kCols : Shape<T>::kVec;
// Loads in flight a thread, and blocks an SM: a vector's columns held (four float columns) take
// eight loads and two blocks (108 registers), the others four loads and three blocks (72-80).
// H200, cold, µs (bench/narrow_probe), eight loads and two blocks against four loads and three:
// 2^26 x 4 float 256.7 / 260.7, 2^25 x 8 float 255.5 / 257.6, 2^24 x 16 float 255.8 / 261.3.
template <class T, unsigned kCols>
inline constexpr unsigned kNarrowLoads = kNarrowHeld<T, kCols> == Shape<T>::kVec ? 8 : 4;
template <class T, unsigned kCols>
inline constexpr int kNarrowBlocksPerSm = kNarrowHeld<T, kCols> == Shape<T>::kVec ? 2 : 3;
// The blocks' partials a launch may post: kCols of them a block, within the workspace's pieces area.
template <class Acc, unsigned kCols>
inline constexpr std::uint64_t kNarrowBlocks = std::min<std::uint64_t>(4096, kPiecePartialBytes / (kCols * sizeof(Acc)));

// A thread's running sums of kCols float columns: a window per column (RunningFold), `most` the
// most elements the thread takes of a column.
template <class T, class Sem, unsigned kCols>
struct NarrowRuns {
  using Acc = typename Sem::Acc;
  RunningFold<T, Sem> run[kCols];
  __device__ __forceinline__ explicit NarrowRuns(std::uint64_t most) {
#pragma unroll
    for (unsigned j = 0; j < kCols; ++j) run[j] = RunningFold<T, Sem>(most);
  }
  template <unsigned N>
  __device__ __forceinline__ void take(unsigned j, const T* e) {
    run[j].template take<N>(e, [](unsigned) { return std::uint64_t(0); });
  }
  __device__ __forceinline__ Acc result(unsigned j) { return run[j].result(); }
};
// kV vectors into the kCols columns' running sums, each column's elements as one batch.
template <unsigned kV, unsigned kCols, class T, class Runs>
__device__ __forceinline__ void narrow_take(Runs& runs, const Vec<T>* v) {
  constexpr unsigned kPer = Shape<T>::kVec / kCols;
#pragma unroll
  for (unsigned j = 0; j < kCols; ++j) {
    T e[kV * kPer];
#pragma unroll
    for (unsigned u = 0; u < kV; ++u)
#pragma unroll
      for (unsigned r = 0; r < kPer; ++r) e[u * kPer + r] = v[u].v[r * kCols + j];
    runs.template take<kV * kPer>(j, e);
  }
}

// Launch with kThreads threads and a grid of at most kNarrowBlocks. (kIn and kMinBlocks: other
// shapes for bench/narrow_probe.)
template <class T, class Sem, unsigned kCols, unsigned kIn = kNarrowLoads<T, kCols>,
          int kMinBlocks = kNarrowBlocksPerSm<T, kCols>>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    reduceNarrowColumns(rl::gmem<const T> input, std::uint64_t rows, rl::gmem<typename Sem::Acc> partials,
                        rl::gmem<unsigned> ticket, rl::gmem<typename Sem::Out> output) {
  using Acc = typename Sem::Acc;
  constexpr unsigned kVec = Shape<T>::kVec, kHeld = kNarrowHeld<T, kCols>;
  constexpr unsigned kPer = kVec / kHeld, kGroups = kCols / kHeld;  // rows a vector, vectors a row
  static_assert(kVec % kCols == 0 || kCols % kVec == 0, "a vector holds whole rows, or a row whole vectors");
  static_assert(kGroups <= 32 && 32 % kGroups == 0 && kThreads % kGroups == 0, "a thread's vectors hold the same columns");
  __shared__ Acc slot_storage[kCols * kWarps];
  rl::smem<Acc> slots = slot_storage;
  __shared__ unsigned last_storage[1];
  rl::smem<unsigned> am_last = last_storage;
  // The last block sums a column whose pair lost part of its sum again itself (BlockRedo).
  __shared__ unsigned long long redo_digit_storage[ExactTraits<T>::kDigits];
  __shared__ unsigned redo_misc_storage[2];
  __shared__ unsigned long long redo_listed_storage[kCols];
  BlockRedo<Sem> here{redo_digit_storage, redo_misc_storage, redo_listed_storage};
  here.clear();  // barriers follow before the last block's stores
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const std::uint64_t threads = std::uint64_t(gridDim.x) * kThreads;
  const std::uint64_t t = std::uint64_t(blockIdx.x) * kThreads + threadIdx.x;
  const std::uint64_t n = rows * kCols, vectors = n / kVec;
  // Units of kIn vectors a thread (vector u * kUnit + i * kThreads + threadIdx.x), every
  // gridDim.x-th to a block, then the vectors past the last whole unit one to a thread.
  constexpr std::uint64_t kUnit = std::uint64_t(kThreads) * kIn;
  const std::uint64_t units = vectors / kUnit;
  const std::uint64_t most = ((units + gridDim.x - 1) / gridDim.x + 1) * kIn;  // vectors a thread takes, at most
  // (Rows wider than a vector: every vector index a thread takes is threadIdx.x modulo kGroups.)
  NarrowRuns<T, Sem, kHeld> runs(most * kPer + 1);  // a thread's elements of a column, at most
  for (std::uint64_t u = blockIdx.x; u < units; u += gridDim.x) {
    Vec<T> v[kIn];
#pragma unroll
    for (unsigned i = 0; i < kIn; ++i) v[i] = load_vec(input, (u * kUnit + i * kThreads + threadIdx.x) * kVec);
    narrow_take<kIn, kHeld>(runs, v);
  }
  std::uint64_t k = units * kUnit + t;
  for (; k < vectors; k += threads) {
    const Vec<T> v = load_vec(input, k * kVec);
    narrow_take<1, kHeld>(runs, &v);
  }
  if constexpr (kGroups == 1) {
    if (t < n - vectors * kVec) {  // the last rows, past the whole vectors: element t of them is in column t % kCols
      const T x = input[vectors * kVec + t];
#pragma unroll
      for (unsigned j = 0; j < kCols; ++j)
        if (t % kCols == j) runs.template take<1>(j, &x);
    }
  }
  // The block's fold of each column: every warp folds its lanes' sums (lanes g, g + kGroups, ...
  // hold the same columns; lane g < kGroups ends with them), then warp w folds columns w, w +
  // kWarps, ... over the kWarps results and posts them. The ticket follows the barrier.
#pragma unroll
  for (unsigned j = 0; j < kHeld; ++j) {
    Acc w = runs.result(j);
#pragma unroll
    for (unsigned offset = 16; offset >= kGroups; offset >>= 1) w = Sem::combine(w, shuffle_down(w, offset));
    if (lane < kGroups) slots[(lane * kHeld + j) * kWarps + warp] = w;
  }
  __syncthreads();
  for (unsigned c = warp; c < kCols; c += kWarps) {
    Acc a = lane < kWarps ? slots[c * kWarps + lane] : Sem::identity();
#pragma unroll
    for (unsigned offset = kWarps / 2; offset > 0; offset >>= 1) a = Sem::combine(a, shuffle_down(a, offset));
    if (lane == 0) partials[std::uint64_t(blockIdx.x) * kCols + c] = a;
  }
  __syncthreads();  // every post written before thread 0's ticket (its release publishes them)
  if (threadIdx.x == 0) am_last[0] = take_ticket(ticket) == gridDim.x - 1 ? 1u : 0u;
  __syncthreads();
  if (am_last[0] == 0) return;
  // The last block: warp w folds the posts of columns w, w + kWarps, ... (lane l those of blocks
  // l, l + 32, ..., four loads in flight) and writes their results. All of it in one warp, column
  // after column, was a chain of dependent steps: 41 us of a 180 us launch for four half columns
  // of 2^26 rows (H200).
  for (unsigned c = warp; c < kCols; c += kWarps) {
    const Acc a = warp_fold<Sem>(fold_band_partials<Sem>(partials + c, kCols, lane, 32, gridDim.x));
    if (lane == 0) store_piece<Sem>(output, c, a, rows, here);
  }
  if (threadIdx.x == 0) ticket[0] = 0u;
  __syncthreads();
  here.run(input, kCols, rows, output);  // the columns whose pair lost part of its sum
}

// ---- Exact sums and means of dense half columns, read as one array, added as integers ----------
// The matrix is read as reduceNarrowColumns reads it (units of kIn 16-byte vectors a thread, a
// thread's vectors always holding the same columns): rows of 2, 4 or 8 halves (a vector holds
// whole rows) or of 2 to 32 vectors (16 to 256 columns; a thread keeps 8 columns). A thread sums
// each column in a plain double (exact for up to kHalfChain halves, exact_pair.cuh); the doubles
// then become what the whole-array kernel adds halves as (ExactHalfSum, exact_half.cuh): an
// integer count of 2^-24 shifted past three flag bits, so that two sums combine with one integer
// addition and one OR, in any order. A thread hands its doubles to its counts in shared memory every
// kHalfChain elements; at the end the lanes that hold the same columns add theirs with shuffles,
// the warps theirs in shared memory, and the blocks theirs with 64-bit atomic additions into one
// counter pair a column (HalfColumnCounts); the block that takes the last ticket rounds each
// column's count once and clears the counters.
// Against the window and pair of each column (NarrowRuns, reduceNarrowColumns: a pair combine at
// every fold, and the last block folding every block's pairs), bench/colsum_probe on an H200
// (cold, µs; a plain read of the 2^28 halves 118.4): 2^25 x 8 155.2 -> 124.4, 2^24 x 16 156.8 ->
// 124.3, 2^23 x 32 160.0 -> 124.8, 2^22 x 64 188.4 -> 125.6, and 2^20 x 256 (until then two
// columns a lane, reduceColumns) 154.7 -> 128.8.
template <class T, class Sem>
inline constexpr bool half_columns_v = std::is_same_v<T, half> && is_exact_pieces<Sem>::value;
inline constexpr unsigned kHalfColumnsMost = 256;  // 32 vectors a row
// The matrices these kernels (and reduceHalfColumnExtrema, below) read as one array: dense, 2, 4
// or 8 to 256 (a power of two) 16-bit columns, a 16-byte aligned start, at least one row.
inline bool dense_half_columns_fit(const void* input, const Pieces& p) {
  const bool columns = p.count == 2 || p.count == 4 ||
                       (p.count >= 8 && p.count <= kHalfColumnsMost && (p.count & (p.count - 1)) == 0);
  return !p.offsets && columns && p.stride == p.count && p.length > 0 && reinterpret_cast<std::uintptr_t>(input) % 16 == 0;
}
template <class T, class Sem>
inline bool half_columns_fit(const void* input, const Pieces& p) {
  return half_columns_v<T, Sem> && dense_half_columns_fit(input, p);
}
// Loads in flight a thread, and blocks an SM (bench/colsum_probe, H200): eight loads and three
// blocks up to 64 columns (124.3-125.6 us; four loads and four blocks 124.8-125.7); from 128
// columns, where a block posts more counts, two blocks (256 columns: 128.8 us against 131.6 on
// three, 134.6 on four).
inline constexpr unsigned kHalfColumnLoads = 8;
template <unsigned kCols>
inline constexpr int kHalfColumnBlocksPerSm = kCols >= 128 ? 2 : 3;

// The launch's counters, in the workspace's piece tickets (zero between launches): the ticket,
// then for each column c the low 32 bits of the blocks' counts added up (low[c], at most 2^32
// terms below 2^32), the rest of them (high[c], two's complement) and the OR of their flags.
struct HalfColumnCounts {
  rl::gmem<unsigned> ticket;
  rl::gmem<unsigned long long> low, high, flags;
};
inline constexpr std::size_t kHalfColumnCountBytes = 8 + 3 * 8 * std::size_t(kHalfColumnsMost);
// The counters in `tickets` (8-byte aligned, at least kHalfColumnCountBytes, zero).
inline HalfColumnCounts half_column_counts(unsigned* tickets) {
  auto* words = reinterpret_cast<unsigned long long*>(tickets + 2);
  return HalfColumnCounts{tickets, words, words + kHalfColumnsMost, words + 2 * kHalfColumnsMost};
}
// Calls f.template operator()<kCols>() with kCols = `count` (half_columns_fit's counts).
template <class F>
inline auto with_half_columns(std::uint64_t count, F&& f) {
  switch (count) {
    case 2: return f.template operator()<2>();
    case 4: return f.template operator()<4>();
    case 8: return f.template operator()<8>();
    case 16: return f.template operator()<16>();
    case 32: return f.template operator()<32>();
    case 64: return f.template operator()<64>();
    case 128: return f.template operator()<128>();
    default: return f.template operator()<256>();
  }
}

// The columns a thread of these kernels keeps (all of them, or a vector's), the rows a vector
// holds, and the vectors a row holds.
template <unsigned kCols>
struct DenseHalfColumns {
  static constexpr unsigned kVec = Shape<half>::kVec;
  static constexpr unsigned kHeld = kCols < kVec ? kCols : kVec;
  static constexpr unsigned kPer = kVec / kHeld, kGroups = kCols / kHeld;
  static_assert(kCols <= kHalfColumnsMost && kVec % kHeld == 0, "a vector holds whole rows, or a row whole vectors");
  static_assert(kGroups <= 32 && 32 % kGroups == 0 && kThreads % kGroups == 0, "a thread's vectors hold the same columns");
};
// A thread's share of a dense matrix of kCols 16-bit columns, read as one array: units of kIn
// 16-byte vectors (vector u * kUnit + i * kThreads + threadIdx.x), every gridDim.x-th unit to a
// block, then the vectors past the last whole unit one to a thread, then (a vector holds whole
// rows) the elements past the last whole vector one to a thread. Every vector index a thread takes
// is threadIdx.x modulo kGroups, so element r * kHeld + j of each of its vectors lies in the same
// column. room(k) comes before k more elements of each column, take(v) with each vector,
// take_one(x, column) with each element past the vectors.
template <unsigned kCols, unsigned kIn, class T, class Room, class Take, class TakeOne>
__device__ __forceinline__ void read_dense_half_columns(rl::gmem<const T> input, std::uint64_t rows, Room&& room,
                                                        Take&& take, TakeOne&& take_one) {
  using D = DenseHalfColumns<kCols>;
  const std::uint64_t threads = std::uint64_t(gridDim.x) * kThreads;
  const std::uint64_t t = std::uint64_t(blockIdx.x) * kThreads + threadIdx.x;
  const std::uint64_t n = rows * kCols, vectors = n / D::kVec;
  constexpr std::uint64_t kUnit = std::uint64_t(kThreads) * kIn;
  const std::uint64_t units = vectors / kUnit;
  for (std::uint64_t u = blockIdx.x; u < units; u += gridDim.x) {
    room(kIn * D::kPer);
    Vec<T> v[kIn];
#pragma unroll
    for (unsigned i = 0; i < kIn; ++i) v[i] = load_vec(input, (u * kUnit + i * kThreads + threadIdx.x) * D::kVec);
#pragma unroll
    for (unsigned i = 0; i < kIn; ++i) take(v[i]);
  }
  for (std::uint64_t k = units * kUnit + t; k < vectors; k += threads) {
    room(D::kPer);
    take(load_vec(input, k * D::kVec));
  }
  if constexpr (D::kGroups == 1) {
    if (t < n - vectors * D::kVec) {  // element t past the whole vectors lies in column t % kCols
      room(1);
      const T e = input[vectors * D::kVec + t];
      take_one(e, static_cast<unsigned>(t % kCols));
    }
  }
}

template <class Sem, unsigned kCols, unsigned kIn = kHalfColumnLoads, int kMinBlocks = kHalfColumnBlocksPerSm<kCols>>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    reduceHalfColumns(rl::gmem<const half> input, std::uint64_t rows, HalfColumnCounts counts,
                      rl::gmem<typename Sem::Out> output) {
  using Count = ExactHalfSum128<Sem::kMean>;  // a column's count and flags
  using I = typename Count::Acc;
  static_assert(std::is_same_v<typename Count::Out, typename Sem::Out>, "the counts round to the pieces' result");
  constexpr unsigned kHeld = DenseHalfColumns<kCols>::kHeld, kPer = DenseHalfColumns<kCols>::kPer;
  constexpr unsigned kGroups = DenseHalfColumns<kCols>::kGroups;
  // Thread t's count of its column j at held[j * kThreads + t]; after the lanes' fold, warp w's
  // count of column g * kHeld + j at held[j * kThreads + w * 32 + g].
  __shared__ I held_storage[kHeld * kThreads];
  rl::smem<I> held = held_storage;
  __shared__ unsigned last_storage[1];
  rl::smem<unsigned> am_last = last_storage;
  const unsigned lane = threadIdx.x % 32;

  double s[kHeld];
#pragma unroll
  for (unsigned j = 0; j < kHeld; ++j) s[j] = -0.0, held[j * kThreads + threadIdx.x] = Count::identity();
  unsigned taken = 0;  // elements in each of the thread's doubles
  // Before k more elements a column: the doubles to the counts if they would pass kHalfChain.
  const auto make_room = [&](unsigned k) {
    if (taken + k > kHalfChain) {
#pragma unroll
      for (unsigned j = 0; j < kHeld; ++j) {
        held[j * kThreads + threadIdx.x] = Count::absorb(held[j * kThreads + threadIdx.x], s[j]);
        s[j] = -0.0;
      }
      taken = 0;
    }
    taken += k;
  };
  const auto take = [&](const Vec<half>& v) {  // element r * kHeld + j of a vector is in column j
#pragma unroll
    for (unsigned r = 0; r < kPer; ++r)
#pragma unroll
      for (unsigned j = 0; j < kHeld; ++j) s[j] += static_cast<double>(widen(v.v[r * kHeld + j]));
  };
  read_dense_half_columns<kCols, kIn>(input, rows, make_room, take, [&](half e, unsigned column) {
#pragma unroll
    for (unsigned j = 0; j < kHeld; ++j)
      if (column == j) s[j] += static_cast<double>(widen(e));
  });
  // The lanes that hold the same columns (g, g + kGroups, ...) add their counts; lane g < kGroups
  // ends with them and leaves them in its own slots.
#pragma unroll
  for (unsigned j = 0; j < kHeld; ++j) {
    I c = Count::absorb(held[j * kThreads + threadIdx.x], s[j]);
#pragma unroll
    for (unsigned offset = 16; offset >= kGroups; offset >>= 1) c = Count::combine(c, shuffle_down(c, offset));
    if (lane < kGroups) held[j * kThreads + threadIdx.x] = c;
  }
  __syncthreads();
  // The block's count of column c, from its warps, into the launch's counters.
  for (unsigned c = threadIdx.x; c < kCols; c += kThreads) {
    const unsigned g = c / kHeld, j = c % kHeld;
    I sum = Count::identity();
    for (unsigned w = 0; w < kWarps; ++w) sum = Count::combine(sum, held[j * kThreads + w * 32 + g]);
    const I units = sum >> 3;  // arithmetic: the count of 2^-24
    atomicAdd(&counts.low[c], static_cast<unsigned long long>(units & I(0xffffffffu)));
    atomicAdd(&counts.high[c], static_cast<unsigned long long>(static_cast<long long>(units >> 32)));
    atomicOr(&counts.flags[c], static_cast<unsigned long long>(sum & I(Count::kFlags)));
    __threadfence();  // this thread's additions reach the counters before the block's ticket
  }
  __syncthreads();
  if (threadIdx.x == 0) am_last[0] = take_ticket(counts.ticket) == gridDim.x - 1 ? 1u : 0u;
  __syncthreads();
  if (am_last[0] == 0) return;
  // The last block: each column's count rounded once; the counters cleared for the next launch.
  for (unsigned c = threadIdx.x; c < kCols; c += kThreads) {
    const auto low = atomicExch(&counts.low[c], 0ull), high = atomicExch(&counts.high[c], 0ull);
    const auto flags = atomicExch(&counts.flags[c], 0ull);
    const I units = (static_cast<I>(static_cast<long long>(high)) << 32) + static_cast<I>(low);
    output[c] = Count::finish(units * 8 | static_cast<I>(flags), rows);
  }
  if (threadIdx.x == 0) counts.ticket[0] = 0u;
}

// ---- Minima and maxima of dense half and bfloat16 columns, read as one array -------------------
// The same reading (read_dense_half_columns) for min and max: a thread keeps, for each word of its
// columns (columns 2q and 2q + 1 of the ones it keeps), the largest and smallest order keys seen
// as one 16x2 max and min a word (keys16x2, as Extremum::absorb_words); a NaN's key lies beyond
// the infinities', so the two extremes also tell whether a column saw one. The lanes that hold the
// same columns meet with shuffles, the warps with shared-memory atomic maxima, the blocks with
// global ones into two counters a column (HalfColumnKeys: the largest key plus 2^15 and 2^15 - 1
// minus the smallest, so that zero, the counters' state between launches, is below every key).
// The block that takes the last ticket writes each column's result and clears the counters.
// Launched on as many blocks an SM as the sums (the launchers cap the grid there: more blocks
// post more maxima). Until then these columns were read two a lane as words (PairExtremum) or four
// words a lane.
template <class T, class Op>
inline constexpr bool half_column_extrema_v =
    is_half_like<T> && (std::is_same_v<Op, op::min> || std::is_same_v<Op, op::max>);
struct HalfColumnKeys {
  rl::gmem<unsigned> ticket;
  rl::gmem<unsigned> most, least;  // kHalfColumnsMost each
};
inline constexpr std::size_t kHalfColumnKeyBytes = 8 + 2 * 4 * std::size_t(kHalfColumnsMost);
// The counters in `tickets` (8-byte aligned, at least kHalfColumnKeyBytes, zero).
inline HalfColumnKeys half_column_keys(unsigned* tickets) {
  return HalfColumnKeys{tickets, tickets + 2, tickets + 2 + kHalfColumnsMost};
}

template <class T, bool kMax, unsigned kCols, unsigned kIn = kHalfColumnLoads, int kMinBlocks = kHalfColumnBlocksPerSm<kCols>>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    reduceHalfColumnExtrema(rl::gmem<const T> input, std::uint64_t rows, HalfColumnKeys keys, rl::gmem<T> output) {
  using Column = Extremum<T, kMax>;
  using Key = typename Column::Key;
  constexpr unsigned kHeld = DenseHalfColumns<kCols>::kHeld, kGroups = DenseHalfColumns<kCols>::kGroups;
  constexpr unsigned kWords = kHeld / 2;  // word q of a vector holds columns 2 (q % kWords) and + 1
  __shared__ unsigned block_storage[2 * kCols];  // the block's counters, as the launch's
  rl::smem<unsigned> block_keys = block_storage;
  __shared__ unsigned last_storage[1];
  rl::smem<unsigned> am_last = last_storage;
  for (unsigned c = threadIdx.x; c < 2 * kCols; c += kThreads) block_keys[c] = 0u;
  std::uint32_t most[kWords], least[kWords];
#pragma unroll
  for (unsigned q = 0; q < kWords; ++q) most[q] = 0x80008000u, least[q] = 0x7fff7fffu;
  const auto take_word = [&](unsigned q, std::uint32_t k) {
    most[q] = extreme_s16x2<true>(most[q], k);
    least[q] = extreme_s16x2<false>(least[q], k);
  };
  read_dense_half_columns<kCols, kIn>(
      input, rows, [](unsigned) {},
      [&](const Vec<T>& v) {
#pragma unroll
        for (unsigned q = 0; q < 4; ++q)
          take_word(q % kWords, keys16x2(std::uint32_t(v.v[2 * q].bits) | std::uint32_t(v.v[2 * q + 1].bits) << 16));
      },
      [&](T e, unsigned column) {  // the other half of the word keeps the identities
        const std::uint32_t k = keys16x2(e.bits) & 0xffffu;
#pragma unroll
        for (unsigned q = 0; q < kWords; ++q) {
          if (column / 2 != q) continue;
          if (column % 2 == 0) {
            most[q] = extreme_s16x2<true>(most[q], 0x80000000u | k);
            least[q] = extreme_s16x2<false>(least[q], 0x7fff0000u | k);
          } else {
            most[q] = extreme_s16x2<true>(most[q], k << 16 | 0x8000u);
            least[q] = extreme_s16x2<false>(least[q], k << 16 | 0x7fffu);
          }
        }
      });
  __syncthreads();  // block_keys cleared
  const unsigned lane = threadIdx.x % 32;
#pragma unroll
  for (unsigned q = 0; q < kWords; ++q) {
#pragma unroll
    for (unsigned offset = 16; offset >= kGroups; offset >>= 1) {
      most[q] = extreme_s16x2<true>(most[q], shuffle_down(most[q], offset));
      least[q] = extreme_s16x2<false>(least[q], shuffle_down(least[q], offset));
    }
    if (lane < kGroups) {
#pragma unroll
      for (unsigned h = 0; h < 2; ++h) {
        const unsigned c = lane * kHeld + 2 * q + h;
        const int hi = static_cast<std::int16_t>(most[q] >> (16 * h)), lo = static_cast<std::int16_t>(least[q] >> (16 * h));
        atomicMax(&block_keys[c], static_cast<unsigned>(hi + 0x8000));
        atomicMax(&block_keys[kCols + c], static_cast<unsigned>(0x7fff - lo));
      }
    }
  }
  __syncthreads();
  for (unsigned c = threadIdx.x; c < kCols; c += kThreads) {
    atomicMax(&keys.most[c], block_keys[c]);
    atomicMax(&keys.least[c], block_keys[kCols + c]);
    __threadfence();  // this thread's maxima reach the counters before the block's ticket
  }
  __syncthreads();
  if (threadIdx.x == 0) am_last[0] = take_ticket(keys.ticket) == gridDim.x - 1 ? 1u : 0u;
  __syncthreads();
  if (am_last[0] == 0) return;
  for (unsigned c = threadIdx.x; c < kCols; c += kThreads) {
    const Key hi = static_cast<Key>(static_cast<int>(atomicExch(&keys.most[c], 0u)) - 0x8000);
    const Key lo = static_cast<Key>(0x7fff - static_cast<int>(atomicExch(&keys.least[c], 0u)));
    output[c] = Column::finish(Column::saw_nan(hi, lo) ? Column::nan_key() : kMax ? hi : lo, rows);
  }
  if (threadIdx.x == 0) keys.ticket[0] = 0u;
}

// ---- Exact sums and means of wide half columns, a 16-byte vector of columns a lane -------------
// Columns too many for reduceHalfColumns (or pitched rows) were read a word of two columns a lane
// (reduceColumns over PairSum): each lane kept a double chain and an exact pair per column, 76
// registers, three blocks an SM, and the exact half sums along 16384 x 16384 and 256 x 2^20 ran
// at 85 and 87 % of the read ceiling (H200) where their maxima, four words a lane, ran at 95; this
// way both run at 92 %, as fast as the maxima.
// Here a lane reads 16 bytes of a row (eight columns) and keeps eight plain doubles, each exact
// for up to kHalfChain halves (exact_pair.cuh): a warp takes 32 vectors (a group of 256 columns)
// over a band of at most kHalfChain rows, the block's eight warps every eighth row of it; the
// warps' doubles meet in shared memory (any sum of a band's halves is a double, so the order does
// not matter). A matrix of one band writes each column then; otherwise each band posts its column
// sums as ExactHalfSum64 counts (|sum| < 2^13 * 2^16 in units of 2^-24, below 2^53), and the block
// that takes its group's last ticket adds the group's posts in 128 bits (ExactHalfSum128) and
// rounds each column once. Where that fills the GPU better (half_bands), a warp takes a group over
// every row instead (at most kHalfChain of them), with no block fold, and writes each lane's eight
// results in one store.
inline constexpr unsigned kBandVec = 8;                     // columns a lane: a 16-byte vector of halves
inline constexpr unsigned kBandColumns = 32 * kBandVec;     // columns a group (a warp's 32 vectors)
inline constexpr unsigned kHalfBandLoads = 8;               // vectors in flight a lane
inline constexpr int kHalfBandBlocksPerSm = 4;
struct HalfBands {
  std::uint64_t rows = 0, pitch = 0, cols = 0;  // pitch in halves, a multiple of kBandVec
  std::uint64_t groups = 0, bands = 1, band_rows = 0;
  bool warp_each = false;  // a warp a group, every row (at most kHalfChain of them), no block fold
};
// The bands of a matrix of half columns on `blocks` resident blocks, or bands == 0 where it does
// not fit: whole 16-byte vectors of columns (cols and pitch multiples of 8, a 16-byte aligned
// start), at least a group's worth of columns with at least 3/4 of the groups' lanes busy, and,
// with more than one band, the posts within the workspace's column partials and a ticket a
// group. Of the band counts that fit, the one whose most jobs a block takes times its rows is
// least (the fewest bands on a tie): 16384 x 16384 takes 8 bands of 2048 rows (512 jobs) on 528
// blocks. Up to kHalfChain rows a warp may take a group alone instead, where the most groups a
// warp then takes times the rows is no more than the bands' rounds times a warp's share of a band:
// 256 x 2^20 (4096 groups on 4224 warps, against 4096 jobs of one band, eight rounds of 528
// blocks) took 131.6 us in bands (H200).
inline HalfBands half_bands(const void* input, const Pieces& p, std::uint64_t blocks) {
  HalfBands s;
  s.rows = p.length, s.pitch = p.stride, s.cols = p.count;
  s.bands = 0;
  const std::uint64_t vectors = p.count / kBandVec;
  if (p.offsets || p.count % kBandVec != 0 || p.stride % kBandVec != 0 || p.length == 0 || vectors < 32 ||
      reinterpret_cast<std::uintptr_t>(input) % 16 != 0)
    return s;
  s.groups = (vectors + 31) / 32;
  if (4 * vectors < 3 * 32 * s.groups) return s;
  if (blocks < 1) blocks = 1;
  const std::uint64_t step = std::uint64_t(kWarps) * kHalfBandLoads;  // rows a block covers per round of loads
  const std::uint64_t fewest = (p.length + kHalfChain - 1) / kHalfChain;
  const std::uint64_t posts = kPiecePartialBytes / (p.count * sizeof(long long));
  const std::uint64_t most = s.groups > kPieceTickets ? 1 : std::min<std::uint64_t>(std::max<std::uint64_t>(posts, 1),
                                                                                      (p.length + step - 1) / step);
  if (fewest > most) return s;
  const auto band_rows = [&](std::uint64_t b) { return ((p.length + b - 1) / b + step - 1) / step * step; };
  std::uint64_t best = 0, best_cost = 0;
  for (std::uint64_t b = fewest; b <= most && b <= fewest + 4 * blocks; ++b) {
    const std::uint64_t rows = std::min<std::uint64_t>(band_rows(b), kHalfChain);
    const std::uint64_t bands = (p.length + rows - 1) / rows;
    if (bands > most) continue;
    const std::uint64_t cost = (s.groups * bands + blocks - 1) / blocks * std::min<std::uint64_t>(rows, p.length);
    if (best == 0 || cost < best_cost) best = bands, best_cost = cost, s.band_rows = rows;
  }
  s.bands = best;
  const std::uint64_t warps = blocks * kWarps;
  s.warp_each = p.length <= kHalfChain && (s.groups + warps - 1) / warps * p.length <= best_cost / kWarps;
  if (s.warp_each) s.bands = 1, s.band_rows = p.length;
  return s;
}

template <class Sem, unsigned kLoads = kHalfBandLoads, int kMinBlocks = kHalfBandBlocksPerSm>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    reduceHalfColumnBands(rl::gmem<const half> input, HalfBands shape, rl::gmem<long long> posts,
                          rl::gmem<unsigned> tickets, rl::gmem<typename Sem::Out> output) {
  using Post = ExactHalfSum64<Sem::kMean>;   // a band's sum of a column
  using Count = ExactHalfSum128<Sem::kMean>;  // the column's
  static_assert(std::is_same_v<typename Count::Out, typename Sem::Out>, "the counts round to the pieces' result");
  // Warp w's double of group column c at sums[w * kRow + c + c / 32]: a lane's eight columns go
  // out two lanes a bank pair, and thread t reads column t of every warp without conflicts.
  constexpr unsigned kRow = kBandColumns + kBandColumns / 32;
  __shared__ double sums_storage[kWarps * kRow];
  rl::smem<double> sums = sums_storage;
  __shared__ unsigned last_storage[1];
  rl::smem<unsigned> am_last = last_storage;
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const std::uint64_t vectors = shape.cols / kBandVec, jobs = shape.groups * shape.bands;
  // Rows r, r + step, ... < end of `vector` into s, kLoads loads in flight.
  const auto add_rows = [&](std::uint64_t vector, std::uint64_t r, std::uint64_t end, std::uint64_t step,
                            double (&s)[kBandVec]) {
    const auto take = [&](const std::uint32_t (&w)[4]) {
#pragma unroll
      for (unsigned j = 0; j < kBandVec; ++j) {
        half e;
        e.bits = static_cast<std::uint16_t>(w[j / 2] >> (16 * (j % 2)));
        s[j] += static_cast<double>(widen(e));
      }
    };
    for (; r + (kLoads - 1) * step < end; r += kLoads * step) {
      std::uint32_t w[kLoads][4];
#pragma unroll
      for (unsigned k = 0; k < kLoads; ++k) load_words(input, (r + k * step) * shape.pitch + vector * kBandVec, true, w[k]);
#pragma unroll
      for (unsigned k = 0; k < kLoads; ++k) take(w[k]);
    }
    for (; r < end; r += step) {
      std::uint32_t w[4];
      load_words(input, r * shape.pitch + vector * kBandVec, true, w);
      take(w);
    }
  };
  if (shape.warp_each) {  // lane l sums vector 32 g + l of every row and writes its eight columns
    for (std::uint64_t g = std::uint64_t(blockIdx.x) * kWarps + warp; g < shape.groups; g += std::uint64_t(gridDim.x) * kWarps) {
      const std::uint64_t vector = g * 32 + lane;
      if (vector >= vectors) continue;
      double s[kBandVec];
#pragma unroll
      for (unsigned j = 0; j < kBandVec; ++j) s[j] = -0.0;
      add_rows(vector, 0, shape.rows, 1, s);
      typename Sem::Out o[kBandVec];
#pragma unroll
      for (unsigned j = 0; j < kBandVec; ++j) o[j] = half_chain_result<Sem>(s[j], shape.rows);
      if (misalignment16<typename Sem::Out>(output) == 0) {
        store_results(output, vector * kBandVec, o);
      } else {
#pragma unroll
        for (unsigned j = 0; j < kBandVec; ++j) output[vector * kBandVec + j] = o[j];
      }
    }
    return;
  }
  for (std::uint64_t job = blockIdx.x; job < jobs; job += gridDim.x) {
    // Jobs that run at once take neighbouring groups of the same band: whole rows at a time.
    const std::uint64_t band = job / shape.groups, group = job % shape.groups;
    const std::uint64_t vector = group * 32 + lane;
    const std::uint64_t row_begin = band * shape.band_rows;
    const std::uint64_t row_end = std::min<std::uint64_t>(shape.rows, row_begin + shape.band_rows);
    double s[kBandVec];
#pragma unroll
    for (unsigned j = 0; j < kBandVec; ++j) s[j] = -0.0;  // -0 + x == x, and -0 + -0 stays -0
    if (vector < vectors) add_rows(vector, row_begin + warp, row_end, kWarps, s);
#pragma unroll
    for (unsigned j = 0; j < kBandVec; ++j) {
      const unsigned c = lane * kBandVec + j;
      sums[warp * kRow + c + c / 32] = s[j];
    }
    __syncthreads();
    // Column c of the group: the warps' doubles added (any order: exact).
    const auto band_sum = [&](unsigned c) {
      double total = -0.0;
      for (unsigned w = 0; w < kWarps; ++w) total += sums[w * kRow + c + c / 32];
      return total;
    };
    if (shape.bands == 1) {
      for (unsigned c = threadIdx.x; c < kBandColumns; c += kThreads) {
        const std::uint64_t column = group * kBandColumns + c;
        if (column >= shape.cols) break;
        output[column] = half_chain_result<Sem>(band_sum(c), shape.rows);  // one band: at most kHalfChain rows
      }
      __syncthreads();  // sums is reused by the next job
      continue;
    }
    for (unsigned c = threadIdx.x; c < kBandColumns; c += kThreads) {
      const std::uint64_t column = group * kBandColumns + c;
      if (column >= shape.cols) break;
      posts[band * shape.cols + column] = Post::absorb(Post::identity(), band_sum(c));
    }
    __syncthreads();  // every post written before thread 0's ticket (its release publishes them)
    if (threadIdx.x == 0) am_last[0] = take_ticket(tickets + group) == shape.bands - 1 ? 1u : 0u;
    __syncthreads();
    if (am_last[0] != 0) {  // the group's last band: add its posts, four loads in flight
      for (unsigned c = threadIdx.x; c < kBandColumns; c += kThreads) {
        const std::uint64_t column = group * kBandColumns + c;
        if (column >= shape.cols) break;
        typename Count::Acc all = Count::identity();
        std::uint64_t b = 0;
        for (; b + 4 <= shape.bands; b += 4) {
          long long q[4];
#pragma unroll
          for (unsigned k = 0; k < 4; ++k) q[k] = load_other_block(posts, (b + k) * shape.cols + column);
#pragma unroll
          for (unsigned k = 0; k < 4; ++k) all = Count::combine(all, Count::from(q[k]));
        }
        for (; b < shape.bands; ++b) all = Count::combine(all, Count::from(load_other_block(posts, b * shape.cols + column)));
        output[column] = Count::finish(all, shape.rows);
      }
      if (threadIdx.x == 0) tickets[group] = 0u;
    }
    __syncthreads();
  }
}

}  // namespace reducelab::detail
