#pragma once
// Pictures of one recorded execution (`reducelab explain KERNEL --svg FILE`, and the report
// page): per reduction step, block 0's warps x 32 lanes (did the step's work, idle, exited), each
// warp's global accesses as the 128-byte lines and 32-byte sectors they touch, the shared-memory
// lane -> bank map of the step's worst access with its conflict ways, and for a small n the
// reduction tree (which element each active lane combined into which).
#include <optional>
#include <string>
#include <vector>

#include "analysis/recorder.hpp"
#include "lab/explain.hpp"

namespace rl::render {

struct PictureLimits {
  unsigned max_warps = 16;     // warps of block 0 drawn per step; the rest are counted in a line
  unsigned max_accesses = 3;   // global accesses drawn per warp and step
  unsigned max_lines = 8;      // 128-byte lines drawn per access
  std::size_t max_tree_elements = 64;  // the tree is drawn when block 0 touches at most this many
};

// The reduction tree of block 0: level 0 holds the elements the first step reads; level k the
// elements step k wrote, each with the elements it combined (indices into the array the step
// reads or writes, in elements of its access width from the lowest address of that memory).
struct TreeLevel {
  std::optional<unsigned> step;  // empty for level 0
  struct Node {
    std::size_t element = 0;
    std::vector<std::size_t> from;  // elements of earlier levels combined into it
  };
  std::vector<Node> nodes;
};
// Empty when the steps leave no tree in memory (e.g. shuffles in registers) or it is too wide.
std::vector<TreeLevel> reduction_tree(const analysis::Trace& trace, std::size_t max_elements);

// The whole picture as an SVG document.
std::string explain_svg(const lab::ExplainReport& r, const PictureLimits& limits = {});

// One step's lane grid alone (rows: warps of block 0): the report's small multiples.
std::string lanes_svg(const analysis::StepTrace& step, unsigned max_warps, const std::string& label);

}  // namespace rl::render
