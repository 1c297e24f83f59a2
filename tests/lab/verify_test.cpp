// The lab's one verdict (lab/verify.hpp): what run, explain and bench judge every result with.
#include <gtest/gtest.h>

#include <cstdint>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "lab/verify.hpp"

namespace {
using namespace rl;
using core::Dtype;
using core::OpKind;

template <class T>
core::Exact<T> exact_of(const std::vector<T>& x) {
  core::Exact<T> e;
  e.add(x);
  return e;
}

template <class R>
lab::Verdict judge_value(const lab::Expected& e, R r, const void* same = nullptr) {
  return lab::judge(e, &r, same, "the CPU backend");
}

TEST(Verdict, IntegerSumsAreExactAndWrapOnlyWhenNarrow) {
  const std::vector<std::int32_t> x = {2147483647, 2147483647, 5};
  const auto wide = lab::expect(exact_of(x), OpKind::sum, Dtype::int64);
  EXPECT_FALSE(wide.wraps);
  EXPECT_EQ(wide.text, "4294967299");
  EXPECT_TRUE(judge_value<std::int64_t>(wide, 4294967299).ok);
  EXPECT_FALSE(judge_value<std::int64_t>(wide, 3).ok);
  EXPECT_EQ(judge_value<std::int64_t>(wide, 3).check, "exact (128-bit reference)");

  const auto wrap = lab::expect(exact_of(x), OpKind::sum, Dtype::int32);  // the textbook's int
  EXPECT_TRUE(wrap.wraps);
  EXPECT_EQ(wrap.text, "3");
  EXPECT_TRUE(judge_value<std::int32_t>(wrap, 3).ok);
  EXPECT_EQ(judge_value<std::int32_t>(wrap, 3).check, "exact modulo 2^32");
}

TEST(Verdict, MinAndMaxAreTheElementsBits) {
  const std::vector<int> x = {7, -3, 12};
  const auto lo = lab::expect(exact_of(x), OpKind::min, Dtype::int64);  // the gallery's wide accumulator
  EXPECT_TRUE(judge_value<std::int64_t>(lo, -3).ok);
  EXPECT_FALSE(judge_value<std::int64_t>(lo, -2).ok);
  EXPECT_EQ(judge_value<std::int64_t>(lo, -3).check, "equal bits");
  const std::vector<float> f = {0.5f, -0.0f, 2.5f};
  const auto hi = lab::expect(exact_of(f), OpKind::max, Dtype::float32);
  EXPECT_EQ(hi.text, "2.5");
  EXPECT_FALSE(judge_value<float>(hi, 2.5000002f).ok);  // one ulp off is a mismatch
}

TEST(Verdict, FloatSumsWithinTheBoundAndOptionallyTheSameBits) {
  std::vector<float> x(1000, 0.1f);
  const auto e = lab::expect(exact_of(x), OpKind::sum, Dtype::float32);
  const float near = 100.0f;
  const auto v = judge_value<float>(e, near);
  EXPECT_TRUE(v.ok) << v.check;
  EXPECT_NE(v.check.find("<="), std::string::npos);
  const auto far = judge_value<float>(e, 101.0f);
  EXPECT_FALSE(far.ok);
  EXPECT_NE(far.check.find("OVER the bound"), std::string::npos);
  const float other = std::nextafter(near, 200.0f);  // within the bound, not the same bits
  const auto same = judge_value<float>(e, near, &other);
  EXPECT_FALSE(same.ok);
  EXPECT_NE(same.check.find("bits equal the CPU backend"), std::string::npos);
  EXPECT_TRUE(judge_value<float>(e, other, &other).ok);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(judge_value<float>(e, nan).ok);
}

TEST(Verdict, HalfSumsReturnFloatAndHalfMaxIsHalf) {
  const std::vector<reducelab::half> x = {reducelab::to_half(1.5f), reducelab::to_half(-0.25f)};
  const auto sum = lab::expect(exact_of(x), OpKind::sum, core::result_dtype(Dtype::half, OpKind::sum));
  EXPECT_EQ(sum.result, Dtype::float32);
  EXPECT_TRUE(judge_value<float>(sum, 1.25f).ok);
  const auto hi = lab::expect(exact_of(x), OpKind::max, core::result_dtype(Dtype::half, OpKind::max));
  EXPECT_TRUE(judge_value<reducelab::half>(hi, x[0]).ok);
  EXPECT_FALSE(judge_value<reducelab::half>(hi, x[1]).ok);
}

// run's path: the gallery input, judged as the kernels' accumulator holds it.
TEST(Verdict, GalleryInputsUseTheAccumulator) {
  const lab::HostArray in = lab::make_input(Dtype::int32, 1000, 1);
  long long sum = 0;
  for (std::size_t i = 0; i < in.n; ++i) sum += in.as<int>()[i];
  const auto wide = lab::expect(in, OpKind::sum, gallery::Accumulate::wide);
  EXPECT_EQ(wide.result, Dtype::int64);
  EXPECT_TRUE(judge_value<long long>(wide, sum).ok);
  const auto wrap = lab::expect(in, OpKind::sum, gallery::Accumulate::wrap);
  EXPECT_EQ(wrap.result, Dtype::int32);
  EXPECT_TRUE(wrap.wraps);
  EXPECT_TRUE(judge_value<int>(wrap, static_cast<int>(sum)).ok);
}

}  // namespace

// Every lab row but sum is judged against the serial fold of its own combine, for every element
// type and both accumulators of the gallery: a new row of RL_OP_TABLE needs no reference of its
// own. The input is folded in pieces and merged, as bench and run extend it across threads.
TEST(Verdict, EveryLabRowButSumIsItsCombinesFold) {
  int rows = 0;
  core::for_each_lab_op([&]<class Tag>() {
    if constexpr (core::op_of<Tag> != OpKind::sum) {
      ++rows;
      const OpKind op = core::op_of<Tag>;
      for (const Dtype d : core::kAllDtypes) {
        core::with_dtype(d, [&]<class T>() {
          const std::size_t n = 1001;
          std::vector<T> x(n);
          std::uint64_t s = 0x9e3779b97f4a7c15ull;
          for (auto& v : x) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            const int small = static_cast<int>((s >> 33) % 200) - 100;  // every type holds it
            if constexpr (std::is_same_v<T, reducelab::half>) v = reducelab::to_half(small * 0.5f);
            else if constexpr (std::is_same_v<T, reducelab::bfloat16>) v = reducelab::to_bfloat16(small * 0.5f);
            else v = static_cast<T>(std::is_signed_v<T> ? small : small + 100);
          }
          core::Exact<T> truth, tail;
          truth.add(std::span<const T>(x).first(400));
          tail.add(std::span<const T>(x).subspan(400));
          truth.merge(tail);
          using R = reducelab::result_t<T, Tag>;
          using F = core::fold_t<T>;
          F want = core::Combine<Tag, F>::identity();
          for (const T v : x) want = core::Combine<Tag, F>{}(want, core::Exact<T>::widen(v));
          const auto e = lab::expect(truth, op, core::dtype_of<R>);
          R r;
          if constexpr (std::is_same_v<R, reducelab::half>) r = reducelab::to_half(want);
          else if constexpr (std::is_same_v<R, reducelab::bfloat16>) r = reducelab::to_bfloat16(want);
          else r = static_cast<R>(want);
          EXPECT_TRUE(judge_value<R>(e, r).ok) << core::name(op) << " " << core::name(d);
          EXPECT_EQ(judge_value<R>(e, r).check, "equal bits");
          // One element more than the fold is judged wrong unless it leaves the fold as it was.
          F other = core::Combine<Tag, F>{}(want, core::Exact<T>::widen(x.front()) + F(1));
          if (other != want) {
            R o;
            if constexpr (std::is_same_v<R, reducelab::half>) o = reducelab::to_half(other);
            else if constexpr (std::is_same_v<R, reducelab::bfloat16>) o = reducelab::to_bfloat16(other);
            else o = static_cast<R>(other);
            EXPECT_FALSE(judge_value<R>(e, o).ok) << core::name(op) << " " << core::name(d);
          }
        });
      }
    }
  });
  EXPECT_GE(rows, 2);  // min and max at least
}
