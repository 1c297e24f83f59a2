// Pictures from recorded executions: the trace they are drawn from, the reduction tree, the SVG
// and the page. Each expectation follows from the kernel's indexing (see the comments).
#include <gtest/gtest.h>

#include <bit>
#include <regex>

#include "lab/explain.hpp"
#include "lab/littles_law.hpp"
#include "lab/report.hpp"
#include "render/explain_svg.hpp"
#include "render/page.hpp"
#include "render/svg.hpp"

namespace {
using namespace rl;

lab::ExplainReport explain(const char* id, std::size_t n, unsigned block) {
  lab::Plan p;
  p.kernels = {gallery::find(id)};
  p.n = n;
  p.block = block;
  p.dtype = rl::core::Dtype::float32;
  auto r = lab::explain(p);
  EXPECT_EQ(r.row.status, "ok") << id;
  return r;
}

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t k = 0;
  for (auto at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++k;
  return k;
}

// PMPP 10.3 at n = 256, block 128: thread t owns element 2t and works at stride s when
// t % s == 0. Within a warp (32 consecutive t) that is lanes 0, s, 2s, ...: mask 0xffffffff at
// s = 1, 0x55555555 at s = 2, 0x11111111 at s = 4; at s = 64 only warps 0 and 2 hold a worker.
TEST(RenderTrace, SimpleKernelLaneMasksPerStep) {
  const auto r = explain("pmpp-simple", 256, 128);
  ASSERT_EQ(r.trace.steps.size(), 9u);  // strides 1..128, then outside
  EXPECT_FALSE(r.trace.steps.back().step.has_value());
  const std::uint32_t masks[] = {0xffffffffu, 0x55555555u, 0x11111111u, 0x01010101u, 0x00010001u, 0x1u, 0x1u, 0x1u};
  for (std::size_t k = 0; k < 8; ++k) {
    const auto& s = r.trace.steps[k];
    ASSERT_EQ(*s.step, 1u << k);
    ASSERT_EQ(s.warps.size(), 4u);  // block 0 only
    EXPECT_EQ(s.warps[0].active, masks[k]) << "stride " << *s.step;
    for (const auto& w : s.warps) EXPECT_EQ(w.live, 0xffffffffu) << "no thread of this kernel returns early";
  }
  EXPECT_EQ(r.trace.steps[6].warps[1].active, 0u);  // stride 64: t = 0 and 64 only
  EXPECT_EQ(r.trace.steps[6].warps[2].active, 1u);
  // Stride 1: each warp reads input[2t] and input[2t + 1] (two loads of 64 consecutive floats,
  // 256 bytes = 2 lines, 8 sectors each) and writes input[2t].
  const auto& w0 = r.trace.steps[0].warps[0];
  ASSERT_EQ(w0.accesses.size(), 3u);
  EXPECT_FALSE(w0.accesses[0].write);
  EXPECT_TRUE(w0.accesses[2].write);
  for (const auto& a : w0.accesses) {
    EXPECT_EQ(a.lanes.size(), 32u);
    EXPECT_EQ(a.lines, 2u);
    EXPECT_EQ(a.sectors, 8u);
    EXPECT_EQ(a.lanes[5].lane, 5u);
    EXPECT_EQ(a.lanes[5].address - a.lanes[4].address, 8u);  // element 2t: 8 bytes apart
  }
  // The trace's per-warp figures add up to the grid's counts (one block here).
  std::uint64_t sectors = 0;
  for (const auto& w : r.trace.steps[0].warps)
    for (const auto& a : w.accesses) sectors += a.sectors;
  EXPECT_EQ(sectors, r.counts.steps[0].global_sectors);
}

// BC_addKernel at stride i in shared memory: thread t adds sdata[2*i*t + i] into sdata[2*i*t].
// At i = 4 lane t's word is 8t: banks 0, 8, 16, 24 take 8 lanes each, an 8-way conflict.
TEST(RenderTrace, BankConflictWaysPerWarpAccess) {
  const auto r = explain("bc-add", 2048, 256);
  const analysis::StepTrace* s4 = nullptr;
  for (const auto& s : r.trace.steps)
    if (s.step == 4u) s4 = &s;
  ASSERT_NE(s4, nullptr);
  const auto& w0 = s4->warps[0];
  ASSERT_FALSE(w0.accesses.empty());
  for (const auto& a : w0.accesses) {
    EXPECT_TRUE(a.shared);
    EXPECT_EQ(a.ways, 8u);
  }
  const std::string svg = render::explain_svg(r);
  EXPECT_NE(svg.find("8-way conflict, 8 wavefronts"), std::string::npos);
  // The 8-way steps of warp 0: at i = 4 (32 workers, words 8t) banks 0, 8, 16, 24; at i = 8
  // (16 workers, words 16t) banks 0 and 16; at i = 16 (8 workers, words 32t) bank 0: 7 banks.
  EXPECT_EQ(count(svg, ">8x</text>"), 4u + 2u + 1u);
}

// reduceNeighbored at n = 32, one warp: at stride s thread t adds element t + s into t when
// t % 2s == 0, so the tree has 16 + 8 + 4 + 2 + 1 nodes above the 32 inputs, each combining
// elements t and t + s; the root is element 0 from 0 and 16.
TEST(RenderTree, NeighboredTreeAt32) {
  const auto r = explain("neighbored", 32, 32);
  const auto tree = render::reduction_tree(r.trace, 64);
  ASSERT_EQ(tree.size(), 6u);
  EXPECT_EQ(tree[0].nodes.size(), 32u);
  const std::size_t widths[] = {16, 8, 4, 2, 1};
  for (std::size_t k = 1; k < 6; ++k) {
    ASSERT_EQ(tree[k].nodes.size(), widths[k - 1]);
    const std::size_t s = std::size_t(1) << (k - 1);
    EXPECT_EQ(*tree[k].step, s);
    for (const auto& node : tree[k].nodes) {
      EXPECT_EQ(node.element % (2 * s), 0u);
      EXPECT_EQ(node.from, (std::vector<std::size_t>{node.element, node.element + s}));
    }
  }
  EXPECT_TRUE(render::reduction_tree(r.trace, 16).empty()) << "32 elements are too many for a limit of 16";
  const std::string svg = render::explain_svg(r);
  EXPECT_NE(svg.find("the reduction tree of block 0"), std::string::npos);
  EXPECT_EQ(count(svg, "<circle"), 32u + 31u);
}

TEST(RenderTree, NoTreeWhenStepsCombineInRegisters) {
  const auto r = explain("warp-shuffle", 64, 32);
  // The shuffle steps touch no memory: nothing links elements, so no tree is claimed.
  for (const auto& level : render::reduction_tree(r.trace, 64))
    for (const auto& node : level.nodes) EXPECT_LT(node.element, 64u);
}

TEST(RenderSvg, EscapesTextAndIsOneDocument) {
  EXPECT_EQ(render::escape("a<b & \"c\">'"), "a&lt;b &amp; &quot;c&quot;&gt;&#39;");
  render::Svg svg;
  svg.text(0, 10, "<script>");
  svg.rect(0, 0, 5, 5, "#000");
  svg.title_last("x < y");
  const std::string doc = svg.str("t&t");
  EXPECT_EQ(doc.find("<script>"), std::string::npos);
  EXPECT_NE(doc.find("<rect x=\"0.0\" y=\"0.0\" width=\"5.0\" height=\"5.0\" fill=\"#000\" ><title>x &lt; y</title></rect>"),
            std::string::npos);
  EXPECT_EQ(count(doc, "<svg "), 1u);
  EXPECT_EQ(count(doc, "</svg>"), 1u);
}

TEST(RenderPage, SectionsAndLittlesLawOnEachBackend) {
  render::PageInput in;
  in.run.device.name = "Test GPU";
  in.run.device.backend = gallery::Backend::cuda;
  in.run.device.sm_count = 132;
  in.run.read_ceiling_gbs = 4000;
  in.run.latency = lab::MemoryLatency{800, 300, 1u << 30, 1u << 23};
  lab::Row a;
  a.id = "unroll8";
  a.name = "reduceUnrolling8";
  a.ms_median = 1;
  a.gb_per_s = 3000;
  a.ok = true;
  a.status = "ok";
  a.bytes_in_flight_per_sm = 65536;
  a.predicted_gb_per_s = 4000;  // 3000 / 4000 = 0.75: at the edge, not flagged
  lab::Row b = a;
  b.id = "neighbored";
  b.gb_per_s = 1000;  // 0.25 of its prediction: flagged
  in.run.rows = {a, b};
  in.explained.push_back(explain("pmpp-simple", 256, 128));
  in.unexplained.emplace_back("cub", "GPU only");
  const std::string gpu = render::report_page(in);
  for (const char* id : {"id=\"device\"", "id=\"progression\"", "id=\"littles-law\"", "id=\"kernels\"", "id=\"bench\"",
                         "id=\"kernel-pmpp-simple\""})
    EXPECT_NE(gpu.find(id), std::string::npos) << id;
  EXPECT_NE(gpu.find("DRAM latency 800.0 ns"), std::string::npos);
  // 4000 GB/s x 800 ns / 132 SMs = 24242 bytes = 23.7 KiB per SM.
  EXPECT_NE(gpu.find("needs 24 KiB in flight per SM"), std::string::npos);
  EXPECT_EQ(count(gpu, "class=\"bad\""), 1u);
  EXPECT_EQ(gpu.find("<script"), std::string::npos);
  EXPECT_EQ(gpu.find("http://"), gpu.find("http://www.w3.org/2000/svg")) << "nothing fetched: only the SVG namespace";

  in.run.device.backend = gallery::Backend::simt;
  in.run.latency.reset();
  const std::string simt = render::report_page(in);
  EXPECT_NE(simt.find("n/a on this run: the emulator has no memory latency"), std::string::npos);
  EXPECT_NE(simt.find("speedup over reduceNeighbored, emulated"), std::string::npos);
}

TEST(RenderPage, BenchJsonChecked) {
  EXPECT_THROW(render::bench_svg(nlohmann::json::object()), std::invalid_argument);
  EXPECT_THROW(render::bench_svg(nlohmann::json{{"rows", {{{"impl", "cub"}}}}}), std::invalid_argument);
  const auto bench = nlohmann::json::parse(R"({"read_ceiling_gbs": 4000, "device": {"name": "G"}, "rows": [
    {"impl": "cub", "dtype": "int32", "op": "sum", "l2": "flushed", "n": 1024, "gb_per_s": 1},
    {"impl": "cub", "dtype": "int32", "op": "sum", "l2": "flushed", "n": 1048576, "gb_per_s": 2000},
    {"impl": "reducelab", "dtype": "int32", "op": "sum", "l2": "flushed", "n": 1024, "gb_per_s": 2},
    {"impl": "reducelab", "dtype": "int32", "op": "sum", "l2": "flushed", "n": 1048576, "gb_per_s": 2500},
    {"impl": "reducelab", "dtype": "int32", "op": "sum", "l2": "warm", "n": 1048576, "gb_per_s": 9999}]})");
  const std::string svg = render::bench_svg(bench);
  EXPECT_EQ(count(svg, "<polyline"), 2u);
  EXPECT_NE(svg.find("read ceiling 4000"), std::string::npos);
  EXPECT_NE(svg.find("L2 flushed on G"), std::string::npos);
  // The current JSON: rows carry a timing mode, the ceiling is read_ceiling_gb_per_s.
  const auto modes = nlohmann::json::parse(R"({"read_ceiling_gb_per_s": 3000, "device": {"name": "H"}, "rows": [
    {"impl": "cub", "dtype": "int32", "op": "sum", "mode": "cold", "n": 1024, "gb_per_s": 1},
    {"impl": "cub", "dtype": "int32", "op": "sum", "mode": "cold", "n": 1048576, "gb_per_s": 2000},
    {"impl": "cub", "dtype": "int32", "op": "sum", "mode": "batch", "n": 1048576, "gb_per_s": 9999}]})");
  const std::string m = render::bench_svg(modes);
  EXPECT_EQ(count(m, "<polyline"), 1u);  // the cold rows only
  EXPECT_NE(m.find("read ceiling 3000"), std::string::npos);
  EXPECT_NE(m.find("cold mode on H"), std::string::npos);
}

TEST(RenderList, FitsTheWidth) {
  for (std::size_t width : {60u, 80u, 100u, 160u}) {
    std::ostringstream out;
    lab::print_list(lab::Format::table, out, width);
    std::istringstream in(out.str());
    std::size_t lines = 0;
    for (std::string line; std::getline(in, line); ++lines) {
      const auto cols = std::count_if(line.begin(), line.end(), [](char c) { return (c & 0xC0) != 0x80; });
      EXPECT_LE(static_cast<std::size_t>(cols), width) << line;
    }
    EXPECT_GT(lines, gallery::registry().size());
    for (const auto& e : gallery::registry())
      EXPECT_NE(out.str().find(std::string(e.id) + " "), std::string::npos) << e.id << " at width " << width;
  }
}

}  // namespace

namespace {
using namespace rl;

// Every textbook kernel declares what it keeps in flight; the library baseline does not.
TEST(LittlesLaw, EveryGalleryKernelDeclaresLoadsInFlight) {
  for (const auto& e : gallery::registry()) {
    if (e.constraints.is_reference) EXPECT_EQ(e.independent_loads, 0u) << e.id;
    else EXPECT_GT(e.independent_loads, 0u) << e.id;
  }
  EXPECT_EQ(gallery::find("unroll8")->independent_loads, 8u);
  EXPECT_EQ(gallery::find("vectorized")->load_width, 16u);
}

// reduceUnrolling8, block 512, int32, 4 blocks per SM of 132: 4 x 512 threads x 8 loads x 4 bytes
// = 65536 bytes per SM; against 800 ns, 132 x 65536 / 800 = 10813 GB/s, capped by a 4000 ceiling.
// A grid of 66 blocks fills half the SMs with one block: 0.5 x 512 x 8 x 4 = 8192 bytes per SM.
TEST(LittlesLaw, BytesInFlightAndPrediction) {
  const auto& u8 = *gallery::find("unroll8");
  EXPECT_DOUBLE_EQ(*lab::bytes_in_flight_per_sm(u8, 4, 512, 4, 100000, 132), 65536.0);
  EXPECT_DOUBLE_EQ(*lab::bytes_in_flight_per_sm(u8, 4, 512, 4, 66, 132), 8192.0);
  EXPECT_DOUBLE_EQ(lab::predicted_gb_per_s(65536, 132, 800, 4000), 4000.0);
  EXPECT_NEAR(lab::predicted_gb_per_s(8192, 132, 800, 4000), 132 * 8192 / 800.0, 1e-9);
  // A 16-byte vector load counts 16 bytes whatever the element.
  EXPECT_DOUBLE_EQ(*lab::bytes_in_flight_per_sm(*gallery::find("vectorized"), 8, 256, 8, 100000, 132), 8 * 256 * 16.0);
  EXPECT_FALSE(lab::bytes_in_flight_per_sm(*gallery::find("cub"), 4, 512, 4, 1000, 132).has_value());
}

}  // namespace
