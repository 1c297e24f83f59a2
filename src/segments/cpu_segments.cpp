// The CPU backend of reduce_axis and reduce_segments: each piece in the fixed order of
// reducelab::reduce for its length (floating-point sums and means: exactly, rounded once), so
// every piece has the bits the GPU gives it.
#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "reducelab/detail/cpu_reduce.hpp"
#include "reducelab/detail/reduce_ops.cuh"
#include "reducelab/detail/reduce_order.hpp"
#include "reducelab/reduce.hpp"
#include "segments/exact_pair.cuh"
#include "segments/pieces.hpp"

namespace reducelab::detail {
namespace {

// A piece of at most one vector lies in thread 0's first vector: every other thread, warp and
// chunk holds the identity, which every built-in combine passes through exactly, so the fixed
// order reduces to this fold (the same bits, without cpu::reduce's per-call set-up).
template <class T, class Op>
result_t<T, Op> short_piece(const T* x, std::uint64_t stride, std::uint64_t len) {
  using Sem = semantics_t<T, Op>;
  typename Sem::Inner in = Sem::inner_identity();
  for (std::uint64_t i = 0; i < len; ++i) in = Sem::inner_combine(in, Sem::lift(x[i * stride], i));
  return Sem::finish(Sem::absorb(Sem::identity(), in), len);
}

// A piece of an order-free operation (integers, min, max, argmin, argmax), folded in element
// order: any grouping gives these operations' bits, and this one has no per-call set-up (short
// rows through cpu_reduce cost about half a microsecond each: seconds for 2^24 rows).
template <class T, class Op>
result_t<T, Op> free_piece(const T* x, std::uint64_t stride, std::uint64_t len) {
  using Sem = semantics_t<T, Op>;
  typename Sem::Acc acc = Sem::identity();
  for (std::uint64_t i = 0; i < len; ++i)
    acc = Sem::absorb(acc, Sem::inner_combine(Sem::inner_identity(), Sem::lift(x[i * stride], i)));
  return Sem::finish(acc, len);
}

// An exact sum or mean of one piece: the GPU's pair of doubles (exact_pieces.cuh) while it holds
// the sum, else every element again through cpu_exact's digits. Either way the correctly rounded
// exact value, so the bits of reducelab::reduce and of the GPU.
template <class T, class Op>
result_t<T, Op> exact_piece(const T* x, std::uint64_t stride, std::uint64_t len, unsigned threads,
                            std::vector<T>& gathered) {
  using Sem = ExactPieceSemantics<T, Op>;
  using Out = result_t<T, Op>;
  constexpr bool kMean = std::is_same_v<Op, op::mean>;
  if (stride == 1 && len > (std::uint64_t(1) << 20)) return cpu_exact<T, Out, kMean>(x, len, threads);
  typename Sem::Acc acc = Sem::identity();
  for (std::uint64_t i = 0; i < len; ++i) acc = Sem::combine(acc, Sem::lift(x[i * stride], i));
  if (!Sem::needs_redo(acc)) return Sem::finish(acc, len);
  if (stride == 1) return cpu_exact<T, Out, kMean>(x, len, threads);
  gathered.resize(len);
  for (std::uint64_t i = 0; i < len; ++i) gathered[i] = x[i * stride];
  return cpu_exact<T, Out, kMean>(gathered.data(), len, threads);
}

// Columns (axis 0) of an order-free operation or of an exact sum, read row by row. Gathering one
// column at a time touches one cache line (for wide matrices, one page) per element: 2^28-element
// matrices took minutes. Here a task takes a tile of neighbouring columns and a band of rows and
// folds each element into its column's accumulator in row order; the bands' accumulators are then
// combined in band order. These operations give the same bits in any grouping (that is what
// order_free promises, and what the GPU's reduceColumns relies on); an exact sum whose pair lost
// part of the sum on the way is summed again with digits, as exact_piece does.
template <class T, class Op>
void swept_columns(const T* input, const Pieces& p, result_t<T, Op>* output, unsigned threads) {
  constexpr bool kExact = exact_sum_v<T, Op>;
  using Sem = std::conditional_t<kExact, ExactPieceSemantics<T, Op>, semantics_t<T, Op>>;
  using Acc = typename Sem::Acc;
  constexpr std::uint64_t kTile = 256;      // columns per task: their accumulators stay in L1
  constexpr std::uint64_t kMinBand = 4096;  // rows per band at least
  const std::uint64_t cols = p.count, rows = p.length;
  const std::uint64_t tiles = (cols + kTile - 1) / kTile;
  // Few tiles (few columns): bands of rows too, so every core has work; their accumulators are
  // kept (bands x cols of them, cols < 1024 x threads here) and combined afterwards.
  std::uint64_t bands = 1;
  if (tiles < 4 * std::uint64_t(threads))
    bands = std::max<std::uint64_t>(1, std::min((4 * std::uint64_t(threads) + tiles - 1) / tiles, rows / kMinBand));
  const std::uint64_t band_rows = (rows + bands - 1) / bands;
  std::vector<Acc> partial(bands > 1 ? bands * cols : 0);
  std::vector<std::uint64_t> lost;  // exact sums whose pair lost part of the sum (bands == 1)
  std::mutex lost_mutex;
  std::atomic<std::uint64_t> next{0};
  auto worker = [&] {
    std::vector<Acc> acc(kTile);
    for (std::uint64_t task; (task = next.fetch_add(1)) < tiles * bands;) {
      const std::uint64_t tile = task / bands, band = task % bands;
      const std::uint64_t c0 = tile * kTile, w = std::min(kTile, cols - c0);
      const std::uint64_t r0 = band * band_rows, r1 = std::min(rows, r0 + band_rows);
      std::fill(acc.begin(), acc.begin() + w, Sem::identity());
      for (std::uint64_t r = r0; r < r1; ++r) {
        const T* row = input + r * p.stride + c0 * p.step;
        for (std::uint64_t c = 0; c < w; ++c) {
          if constexpr (kExact) acc[c] = Sem::combine(acc[c], Sem::lift(row[c * p.step], r));
          else acc[c] = Sem::absorb(acc[c], Sem::inner_combine(Sem::inner_identity(), Sem::lift(row[c * p.step], r)));
        }
      }
      if (bands > 1) {
        std::copy(acc.begin(), acc.begin() + w, partial.begin() + band * cols + c0);
        continue;
      }
      for (std::uint64_t c = 0; c < w; ++c) {
        if constexpr (kExact) {
          if (Sem::needs_redo(acc[c])) {
            const std::lock_guard<std::mutex> hold(lost_mutex);
            lost.push_back(c0 + c);
            continue;
          }
        }
        output[c0 + c] = Sem::finish(acc[c], rows);
      }
    }
  };
  const unsigned workers = static_cast<unsigned>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(threads, tiles * bands)));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < workers; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (bands > 1) {
    for (std::uint64_t c = 0; c < cols; ++c) {
      Acc total = partial[c];
      for (std::uint64_t b = 1; b < bands; ++b) total = Sem::combine(total, partial[b * cols + c]);
      if constexpr (kExact) {
        if (Sem::needs_redo(total)) {
          lost.push_back(c);
          continue;
        }
      }
      output[c] = Sem::finish(total, rows);
    }
  }
  if constexpr (kExact) {  // rare: every element of the column again, with digits
    std::vector<T> gathered(lost.empty() ? 0 : rows);
    for (const std::uint64_t c : lost) {
      for (std::uint64_t r = 0; r < rows; ++r) gathered[r] = input[c * p.step + r * p.stride];
      output[c] = cpu_exact<T, result_t<T, Op>, std::is_same_v<Op, op::mean>>(gathered.data(), rows, threads);
    }
  }
}

template <class T, class Op>
Status cpu_pieces(const T* input, const Pieces& p, const std::int64_t* begin, const std::int64_t* end,
                  result_t<T, Op>* output, unsigned threads) {
  if (p.count == 0) return {};
  if (p.offsets) {
    for (std::uint64_t i = 0; i < p.count; ++i)
      if (begin[i] < 0 && end[i] > begin[i])
        return Status(Errc::invalid_argument, "reduce_segments: segment " + std::to_string(i) + " begins at " +
                                                  std::to_string(begin[i]));
    if (input == nullptr)
      for (std::uint64_t i = 0; i < p.count; ++i)
        if (end[i] > begin[i])
          return Status(Errc::invalid_argument, "reduce_segments: input is null but segment " + std::to_string(i) +
                                                    " is not empty");
  }
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  if constexpr (exact_sum_v<T, Op> || semantics_t<T, Op>::order_free) {
    if (!p.offsets && p.stride > 1 && p.length > Shape<T>::kVec) {  // shorter columns: a few rows, read as they are
      swept_columns<T, Op>(input, p, output, threads);
      return {};
    }
  }
  // One piece: cpu_reduce's chunks spread it over the cores. Many: a piece per task, one core each.
  const unsigned per_piece = p.count < threads ? threads : 1;
  const unsigned workers = static_cast<unsigned>(std::min<std::uint64_t>(p.count < threads ? 1 : threads, p.count));

  auto one = [&](std::uint64_t i, std::vector<T>& column) {
    if constexpr (exact_sum_v<T, Op>) {
      if (p.offsets) {
        const std::uint64_t len = segment_length(begin[i], end[i]);
        output[i] = exact_piece<T, Op>(len ? input + begin[i] : input, 1, len, per_piece, column);
      } else {
        output[i] = exact_piece<T, Op>(input + i * p.step, p.stride, p.length, per_piece, column);
      }
      return;
    }
    if constexpr (semantics_t<T, Op>::order_free) {
      if (per_piece == 1) {  // many pieces, a core each: no need to split one
        if (p.offsets) {
          const std::uint64_t len = segment_length(begin[i], end[i]);
          output[i] = free_piece<T, Op>(len ? input + begin[i] : input, 1, len);
        } else {
          output[i] = free_piece<T, Op>(input + i * p.step, p.stride, p.length);
        }
        return;
      }
    }
    if (!p.offsets && p.length <= Shape<T>::kVec) {
      output[i] = short_piece<T, Op>(input + i * p.step, p.stride, p.length);
    } else if (p.offsets && segment_length(begin[i], end[i]) <= Shape<T>::kVec) {
      const std::uint64_t len = segment_length(begin[i], end[i]);
      output[i] = short_piece<T, Op>(len ? input + begin[i] : input, 1, len);
    } else if (p.offsets) {
      const std::uint64_t len = segment_length(begin[i], end[i]);
      output[i] = detail::cpu_reduce<T, semantics_t<T, Op>>(len ? input + begin[i] : input, len, per_piece);
    } else if (p.stride == 1) {
      output[i] = detail::cpu_reduce<T, semantics_t<T, Op>>(input + i * p.step, p.length, per_piece);
    } else {  // a column: gathered, then the same order
      column.resize(p.length);
      for (std::uint64_t r = 0; r < p.length; ++r) column[r] = input[i * p.step + r * p.stride];
      output[i] = detail::cpu_reduce<T, semantics_t<T, Op>>(column.data(), p.length, per_piece);
    }
  };
  std::atomic<std::uint64_t> next{0};
  auto worker = [&] {
    std::vector<T> column;
    constexpr std::uint64_t kBatch = 64;
    for (std::uint64_t first; (first = next.fetch_add(kBatch)) < p.count;)
      for (std::uint64_t i = first; i < std::min(p.count, first + kBatch); ++i) one(i, column);
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < workers; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  return {};
}

}  // namespace
}  // namespace reducelab::detail

namespace reducelab::cpu {

template <class T, class Op>
Status reduce_axis(const T* input, Matrix m, int axis, Op, result_t<T, Op>* output, unsigned threads) {
  detail::Pieces p;
  if (Status s = detail::matrix_pieces(input, m, axis, output, &p); !s) return s;
  return detail::cpu_pieces<T, Op>(input, p, nullptr, nullptr, output, threads);
}

template <class T, class Op>
Status reduce_segments(const T* input, std::uint64_t count, const std::int64_t* begin, const std::int64_t* end, Op,
                       result_t<T, Op>* output, unsigned threads) {
  detail::Pieces p;
  if (Status s = detail::segment_pieces(input, count, begin, end, output, &p); !s) return s;
  return detail::cpu_pieces<T, Op>(input, p, begin, end, output, threads);
}

#define REDUCELAB_CPU_SEGMENTS_(T, OP)                                                                  \
  template Status reduce_axis<T, op::OP>(const T*, Matrix, int, op::OP, result_t<T, op::OP>*, unsigned); \
  template Status reduce_segments<T, op::OP>(const T*, std::uint64_t, const std::int64_t*, const std::int64_t*, \
                                             op::OP, result_t<T, op::OP>*, unsigned);
#define REDUCELAB_CPU_SEGMENTS_TYPE_(T) REDUCELAB_FOR_EACH_OP(REDUCELAB_CPU_SEGMENTS_, T)
REDUCELAB_FOR_EACH_TYPE(REDUCELAB_CPU_SEGMENTS_TYPE_)

}  // namespace reducelab::cpu
