#pragma once
// The pieces of one reduce_axis or reduce_segments call, in one form for the CPU backend, the GPU
// kernel and the SIMT runner: piece p starts at element first(p) of the input, has length(p)
// elements, `stride` elements apart.
//   axis 1 (rows):     count = rows, first = p * pitch, length = cols, stride 1
//   axis 0 (columns):  count = cols, first = p,         length = rows, stride = pitch
//   segments:          count,        first = begin[p],  length = max(end[p] - begin[p], 0), stride 1
#include <cstdint>
#include <string>

#include "reducelab/detail/reduce_order.hpp"
#include "reducelab/segments.hpp"

namespace reducelab::detail {

struct Pieces {
  std::uint64_t count = 0;
  bool offsets = false;         // segments: first and length come from begin/end
  std::uint64_t step = 0;       // matrix: first(p) = p * step
  std::uint64_t length = 0;     // matrix: every piece's length
  std::uint64_t stride = 1;     // elements of a piece are this far apart
  std::uint64_t elements = 0;   // matrix: how many input elements a call may read
  bool skip_short = false;      // reduceSegments leaves pieces of at most one tile to the warps
};

// Which kernels a call runs: a thread per matrix piece of at most one vector (reduceTinyPieces),
// a warp per contiguous piece of at most one tile (reduceShortPieces),
// a block per longer or strided piece (reduceSegments). A matrix runs one of them; segments,
// whose lengths only the GPU reads, run both, each skipping the other's pieces.
struct PieceKernels {
  bool threads = false;  // reduceTinyPieces: a matrix whose pieces hold at most one vector
  bool warps = false;
  bool blocks = false;
};
template <class T>
inline PieceKernels piece_kernels(Pieces* p) {
  PieceKernels k;
  constexpr std::uint64_t kTile = Shape<T>::kTile;
  if (p->offsets) {
    k.warps = k.blocks = true;
    p->skip_short = true;
  } else if (p->length <= Shape<T>::kVec) {
    k.threads = true;
  } else if (p->stride == 1 && p->length <= kTile) {
    k.warps = true;
  } else {
    k.blocks = true;
  }
  return k;
}

RL_HD_INLINE std::uint64_t segment_length(std::int64_t begin, std::int64_t end) {
  return end > begin ? static_cast<std::uint64_t>(end - begin) : 0;
}

// Checks a matrix call and describes its pieces; the message names the bad value.
inline Status matrix_pieces(const void* input, Matrix m, int axis, const void* output, Pieces* out) {
  const char* who = "reduce_axis";
  if (axis != 0 && axis != 1)
    return Status(Errc::invalid_argument, std::string(who) + ": axis " + std::to_string(axis) + " is not 0 or 1");
  const std::uint64_t pitch = m.pitch == 0 ? m.cols : m.pitch;
  if (pitch < m.cols)
    return Status(Errc::invalid_argument, std::string(who) + ": pitch " + std::to_string(m.pitch) +
                                              " is below cols " + std::to_string(m.cols));
  const unsigned __int128 span = m.rows == 0 || m.cols == 0
                                     ? 0
                                     : static_cast<unsigned __int128>(m.rows - 1) * pitch + m.cols;
  if (span >> 63)
    return Status(Errc::invalid_argument, std::string(who) + ": a " + std::to_string(m.rows) + " x " +
                                              std::to_string(pitch) + " matrix does not fit 64-bit indices");
  if (input == nullptr && span > 0) return Status(Errc::invalid_argument, std::string(who) + ": input is null");
  Pieces p;
  p.elements = static_cast<std::uint64_t>(span);
  if (axis == 1) {
    p.count = m.rows, p.step = pitch, p.length = m.cols, p.stride = 1;
  } else {
    p.count = m.cols, p.step = 1, p.length = m.rows, p.stride = pitch;
  }
  if (output == nullptr && p.count > 0) return Status(Errc::invalid_argument, std::string(who) + ": output is null");
  *out = p;
  return {};
}

inline Status segment_pieces(const void* input, std::uint64_t count, const std::int64_t* begin,
                             const std::int64_t* end, const void* output, Pieces* out) {
  if (count > 0 && (begin == nullptr || end == nullptr))
    return Status(Errc::invalid_argument, "reduce_segments: begin or end is null with " + std::to_string(count) + " segments");
  if (count > 0 && output == nullptr) return Status(Errc::invalid_argument, "reduce_segments: output is null");
  (void)input;  // may be null when every segment is empty; the CPU backend checks per segment
  Pieces p;
  p.count = count;
  p.offsets = true;
  *out = p;
  return {};
}

}  // namespace reducelab::detail
