#pragma once
// reducelab::dist's combining logic, read by nvcc (the fold kernels of src/dist) and by g++
// (the CPU backend with simulated or MPI ranks), so every backend combines ranks with the same
// code.
//
// Every rank sends one fixed-size Record to every other (an all-gather): what it reduces
// (dtype, op, its element count, the total it expects) and, for most operations, its partial
// result. Three kinds of operation:
//   order_free  integers (sums wrap modulo 2^64, means carry 128 bits), min, max, argmin and
//               argmax: the rank's unfinished accumulator; the ranks' accumulators combine in
//               any order to the same bits, argmin/argmax indices shifted by the rank's offset.
//   exact       floating-point sums and means: the rank's exact digits (exact_sum.cuh), not
//               rounded. Digits add as integers, so the sum over ranks is the exact sum of the
//               whole array, rounded once, like one GPU.
//   chunked     floating-point products: the order is fixed by the total n (reduce_order.hpp).
//               Chunk c belongs to the rank that holds its first element; that rank receives the
//               chunk's tail from the ranks after it (a halo), folds each of its chunks with the
//               one-GPU code, and the chunk results are gathered and folded in the fixed order.
// A record is 640 bytes whatever the type and operation, so ranks that disagree still meet in
// the same collective and all of them report the disagreement instead of hanging.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "reducelab/config.hpp"
#include "reducelab/detail/exact_sum.cuh"
#include "reducelab/detail/reduce_ops.cuh"
#include "reducelab/detail/reduce_order.hpp"
#include "reducelab/reduce.hpp"

namespace reducelab::detail::dist {

inline constexpr std::uint64_t kMagic = 0x3154534944524cull;  // "LRDIST1"
inline constexpr std::uint64_t kNoTotal = ~0ull;
inline constexpr int kPayloadWords = 74;
inline constexpr int kFlagWord = kMaxExactDigits;  // exact sums: the flags beside the digits
static_assert(kFlagWord < kPayloadWords);

struct alignas(16) Record {
  std::uint64_t magic;
  std::uint64_t dtype;  // dtype_code<T>
  std::uint64_t op;     // op_code<Op>
  std::uint64_t n;      // this rank's elements
  std::uint64_t total;  // the total this rank expects, or kNoTotal
  std::uint64_t error;  // non-zero: this rank's input is bad (1: a null shard with n > 0, 2: a null output)
  std::uint64_t payload[kPayloadWords];
};
static_assert(sizeof(Record) == 640);

// The head of a record as the order-free kernel writes it: the header and the accumulator.
template <class Acc>
struct alignas(16) RecordHead {
  std::uint64_t magic, dtype, op, n, total, error;
  Acc acc;
};

// The direct exchange (GPUs of one host with peer access, up to kMaxDirect ranks): every rank
// writes its record into every rank's mailbox over NVLink or PCIe and then raises its round number
// there; a rank folds once every rank's number has reached the round. Two slots per rank, used in
// turn: a rank can start round k + 1 only after every rank delivered round k, so slot k % 2 is
// never rewritten while it may still be read.
inline constexpr int kMaxDirect = 8;
struct Mailbox {
  Record box[2][kMaxDirect];
  std::uint64_t arrived[kMaxDirect];  // the last round each rank delivered here
};

enum class Path { order_free, exact, chunked };
template <class T, class Op>
inline constexpr Path path_of = exact_sum_v<T, Op>                  ? Path::exact
                                : semantics_t<T, Op>::order_free ? Path::order_free
                                                                  : Path::chunked;

template <class T>
constexpr std::uint64_t dtype_code() {
  if constexpr (std::is_same_v<T, std::int8_t>) return 0;
  else if constexpr (std::is_same_v<T, std::int16_t>) return 1;
  else if constexpr (std::is_same_v<T, std::int32_t>) return 2;
  else if constexpr (std::is_same_v<T, std::int64_t>) return 3;
  else if constexpr (std::is_same_v<T, std::uint8_t>) return 4;
  else if constexpr (std::is_same_v<T, std::uint16_t>) return 5;
  else if constexpr (std::is_same_v<T, std::uint32_t>) return 6;
  else if constexpr (std::is_same_v<T, std::uint64_t>) return 7;
  else if constexpr (std::is_same_v<T, half>) return 8;
  else if constexpr (std::is_same_v<T, bfloat16>) return 9;
  else if constexpr (std::is_same_v<T, float>) return 10;
  else return 11;  // double
}
inline const char* dtype_name(std::uint64_t code) {
  constexpr const char* kNames[] = {"int8",   "int16",  "int32", "int64", "uint8", "uint16",
                                    "uint32", "uint64", "half",  "bf16",  "float", "double"};
  return code < 12 ? kNames[code] : "an unknown dtype";
}
template <class Op>
constexpr std::uint64_t op_code() {
  if constexpr (std::is_same_v<Op, op::sum>) return 0;
  else if constexpr (std::is_same_v<Op, op::prod>) return 1;
  else if constexpr (std::is_same_v<Op, op::min>) return 2;
  else if constexpr (std::is_same_v<Op, op::max>) return 3;
  else if constexpr (std::is_same_v<Op, op::mean>) return 4;
  else if constexpr (std::is_same_v<Op, op::argmin>) return 5;
  else return 6;  // argmax
}
inline const char* op_name_of(std::uint64_t code) {
  constexpr const char* kNames[] = {"sum", "prod", "min", "max", "mean", "argmin", "argmax"};
  return code < 7 ? kNames[code] : "an unknown op";
}

template <class T, class Op>
RL_HD_INLINE void write_header(Record& r, std::uint64_t n, std::uint64_t total, bool bad_input) {
  r.magic = kMagic;
  r.dtype = dtype_code<T>();
  r.op = op_code<Op>();
  r.n = n;
  r.total = total;
  r.error = bad_input ? 1 : 0;
}

// What went wrong, the same on every rank (every rank checks the same records).
enum class Code : std::uint32_t {
  ok = 0,
  bad_record,      // a rank's record is not one (a different program, or memory not written)
  dtype_mismatch,  // rank `rank` reduces dtype a, rank 0 dtype b
  op_mismatch,     // rank `rank` reduces op a, rank 0 op b
  bad_input,       // rank `rank` passed a null shard with a = n > 0 elements (b = 1) or a null output (b = 2)
  total_mismatch,  // rank `rank` expects a total of a, the shards hold b
  empty_input,     // min/max/argmin/argmax of no elements at all
  peer_timeout,    // rank `rank`'s record did not reach this rank within a milliseconds (the direct exchange)
};
struct Failure {
  std::uint32_t code = 0;
  std::int32_t rank = -1;
  std::uint64_t a = 0, b = 0;
};

// Checks the records against rank 0's; the total element count on success.
RL_HD_INLINE Failure check_records(const Record* recs, int ranks, std::uint64_t* total) {
  Failure f;
  std::uint64_t sum = 0;
  for (int r = 0; r < ranks; ++r) {
    const Record& x = recs[r];
    if (x.magic != kMagic) return Failure{std::uint32_t(Code::bad_record), r, x.magic, kMagic};
    if (x.dtype != recs[0].dtype) return Failure{std::uint32_t(Code::dtype_mismatch), r, x.dtype, recs[0].dtype};
    if (x.op != recs[0].op) return Failure{std::uint32_t(Code::op_mismatch), r, x.op, recs[0].op};
    if (x.error != 0) return Failure{std::uint32_t(Code::bad_input), r, x.n, x.error};
    sum += x.n;
  }
  for (int r = 0; r < ranks; ++r)
    if (recs[r].total != kNoTotal && recs[r].total != sum)
      return Failure{std::uint32_t(Code::total_mismatch), r, recs[r].total, sum};
  *total = sum;
  return f;
}

// An order-free operation's accumulator, left unfinished (the rank's partial result).
template <class Sem>
struct RawSem : Sem {
  using Out = typename Sem::Acc;
  RL_HD_INLINE static Out finish(typename Sem::Acc a, std::uint64_t) { return a; }
};
// The same, written with the record's header: one store from the order-free kernel.
template <class T, class Op>
struct HeadSem : semantics_t<T, Op> {
  using Sem = semantics_t<T, Op>;
  using Out = RecordHead<typename Sem::Acc>;
  RL_HD_INLINE static Out finish(typename Sem::Acc a, std::uint64_t n) {
    Out o;
    o.magic = kMagic;
    o.dtype = dtype_code<T>();
    o.op = op_code<Op>();
    o.n = n;
    o.total = kNoTotal;
    o.error = 0;
    o.acc = a;
    return o;
  }
};

template <class Op>
inline constexpr bool is_arg_op = std::is_same_v<Op, op::argmin> || std::is_same_v<Op, op::argmax>;

// Order-free and exact operations: the result from every rank's record (checked first).
template <class T, class Op>
RL_HD_INLINE Failure fold_records(const Record* recs, int ranks, result_t<T, Op>* out) {
  std::uint64_t total = 0;
  Failure f = check_records(recs, ranks, &total);
  if (f.code != 0) return f;
  if constexpr (needs_an_element<Op>)
    if (total == 0) return Failure{std::uint32_t(Code::empty_input), 0, 0, 0};
  using R = result_t<T, Op>;
  if constexpr (path_of<T, Op> == Path::order_free) {
    using Sem = semantics_t<T, Op>;
    using Acc = typename Sem::Acc;
    Acc acc = Sem::identity();
    std::uint64_t offset = 0;
    for (int r = 0; r < ranks; ++r) {
      Acc a;
      memcpy(&a, recs[r].payload, sizeof a);
      if constexpr (is_arg_op<Op>)
        if (a.index != Sem::kNone) a.index += static_cast<std::int64_t>(offset);
      acc = Sem::combine(acc, a);
      offset += recs[r].n;
    }
    *out = Sem::finish(acc, total);
  } else if constexpr (path_of<T, Op> == Path::exact) {
    constexpr int kD = ExactTraits<T>::kDigits;
    constexpr bool kMean = std::is_same_v<Op, op::mean>;
    std::int64_t digits[kD];
    for (int d = 0; d < kD; ++d) digits[d] = 0;
    unsigned flags = 0;
    for (int r = 0; r < ranks; ++r) {
      for (int d = 0; d < kD; ++d)
        digits[d] = static_cast<std::int64_t>(static_cast<std::uint64_t>(digits[d]) + recs[r].payload[d]);
      flags |= static_cast<unsigned>(recs[r].payload[kFlagWord]);
    }
    if (total == 0) {
      *out = kMean ? std::numeric_limits<R>::quiet_NaN() : R(0);
    } else {
      std::uint32_t words[kD + 4];
      *out = exact_result<T, R>(digits, flags, kMean ? total : 1, words);
    }
  }
  return f;
}

// ---- chunked operations (floating-point products) ----------------------------------------

// The first chunk whose first element is at or after global element g (plan.chunks if none).
RL_HD_INLINE std::uint64_t first_chunk_from(const Plan& p, std::uint64_t g) {
  if (p.chunks == 0 || g >= p.n) return p.chunks;
  const std::uint64_t q = (g + p.tile - 1) / p.tile;  // begin(c) >= g  <=>  floor(K c / C) >= q
  const unsigned __int128 num = static_cast<unsigned __int128>(q) * p.chunks;
  const std::uint64_t c = static_cast<std::uint64_t>((num + p.tiles - 1) / p.tiles);
  return c < p.chunks ? c : p.chunks;
}

// Rank r's part of the chunked order: its offset, the chunks it owns [c0, c1) and, when its
// last chunk runs past its shard, the halo [halo_begin, halo_end) it receives.
struct Ownership {
  std::uint64_t offset = 0, n = 0;
  std::uint64_t c0 = 0, c1 = 0;
  std::uint64_t halo_begin = 0, halo_end = 0;
};
RL_HD_INLINE Ownership ownership(const Plan& p, std::uint64_t offset, std::uint64_t n) {
  Ownership o;
  o.offset = offset;
  o.n = n;
  o.c0 = first_chunk_from(p, offset);
  o.c1 = n == 0 ? o.c0 : first_chunk_from(p, offset + n);
  o.halo_begin = o.halo_end = offset + n;
  if (o.c1 > o.c0) {
    const std::uint64_t end = p.chunk_begin(o.c1);
    if (end > offset + n) o.halo_end = end;
  }
  return o;
}

// Every rank's part, the shards laid end to end in rank order: out[r] for r < ranks.
RL_HD_INLINE void ownerships(const Plan& p, const Record* recs, int ranks, Ownership* out) {
  std::uint64_t off = 0;
  for (int r = 0; r < ranks; ++r) {
    out[r] = ownership(p, off, recs[r].n);
    off += recs[r].n;
  }
}

// The most chunks any rank owns (the slots each rank contributes to the gather of chunk results).
RL_HD_INLINE std::uint64_t most_owned(const Plan& p, const Record* recs, int ranks) {
  std::uint64_t off = 0, most = 0;
  for (int r = 0; r < ranks; ++r) {
    const Ownership o = ownership(p, off, recs[r].n);
    if (o.c1 - o.c0 > most) most = o.c1 - o.c0;
    off += recs[r].n;
  }
  return most;
}

}  // namespace reducelab::detail::dist
