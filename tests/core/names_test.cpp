#include <gtest/gtest.h>

#include <limits>
#include <set>
#include <type_traits>
#include <string>

#include "core/dtype.hpp"
#include "core/ops.hpp"

using namespace rl::core;

TEST(Names, DtypesRoundTrip) {
  for (Dtype d : kAllDtypes) EXPECT_EQ(parse_dtype(name(d)), d);
  EXPECT_EQ(parse_dtype("INT"), Dtype::int32);
  EXPECT_EQ(parse_dtype("f64"), Dtype::float64);
  EXPECT_FALSE(parse_dtype("int33"));
  EXPECT_EQ(dtype_choices(/*gallery_only=*/true), "int32, float, double");
}

TEST(Names, OpsRoundTrip) {
  for (OpKind op : kLabOps) EXPECT_EQ(parse_op(name(op), /*lab_only=*/true), op);
  EXPECT_FALSE(parse_op("mean", /*lab_only=*/true));
}

TEST(Ops, IdentitiesAreNeutral) {
  EXPECT_EQ(Sum<int>{}(Sum<int>::identity(), 5), 5);
  EXPECT_EQ(Min<float>{}(Min<float>::identity(), -3.5f), -3.5f);
  EXPECT_EQ(Max<long long>{}(Max<long long>::identity(), -7LL), -7LL);
  EXPECT_EQ(Min<int>::identity(), INT32_MAX);
}

// The dtype table: every row's facts agree with the library's C++ type, names are unique, and
// the visitor hands over the row's type.
TEST(DtypeTable, RowsAgreeWithTheirTypes) {
  ASSERT_EQ(kAllDtypes.size(), 12u);
  std::set<std::string_view> names;
  for (Dtype d : kAllDtypes) {
    const DtypeInfo& row = info(d);
    EXPECT_EQ(row.id, d);
    EXPECT_TRUE(names.insert(row.name).second) << row.name;
    with_dtype(d, [&]<class T>() {
      EXPECT_EQ(dtype_of<T>, d) << row.name;
      EXPECT_EQ(row.size, sizeof(T)) << row.name;
      EXPECT_EQ(row.sum_size, sizeof(reducelab::accumulate_t<T>)) << row.name;
      EXPECT_EQ(row.integer, !reducelab::is_floating<T>) << row.name;
      EXPECT_EQ(result_bytes(d, OpKind::sum), sizeof(reducelab::accumulate_t<T>)) << row.name;
      EXPECT_EQ(result_bytes(d, OpKind::max), sizeof(T)) << row.name;
    });
  }
  EXPECT_EQ(dtype_choices(), "int8, int16, int32, int64, uint8, uint16, uint32, uint64, half, bf16, float, double");
  static_assert(result_dtype(Dtype::int32, OpKind::sum) == Dtype::int64);
  static_assert(result_dtype(Dtype::uint8, OpKind::sum) == Dtype::uint64);
  static_assert(result_dtype(Dtype::half, OpKind::sum) == Dtype::float32);
  static_assert(result_dtype(Dtype::bf16, OpKind::min) == Dtype::bf16);
}

TEST(DtypeTable, AliasesAndNumpyCodes) {
  EXPECT_EQ(parse_dtype("bfloat16"), Dtype::bf16);
  EXPECT_EQ(parse_dtype("FP16"), Dtype::half);
  EXPECT_EQ(parse_dtype("float16"), Dtype::half);
  EXPECT_EQ(parse_dtype("float32"), Dtype::float32);
  EXPECT_EQ(parse_dtype("i32"), Dtype::int32);
  EXPECT_FALSE(parse_dtype(""));
  EXPECT_FALSE(parse_dtype("in"));  // no prefix matching
  EXPECT_EQ(dtype_of_numpy("i1"), Dtype::int8);
  EXPECT_EQ(dtype_of_numpy("u8"), Dtype::uint64);
  EXPECT_EQ(dtype_of_numpy("f2"), Dtype::half);
  EXPECT_EQ(dtype_of_numpy("f8"), Dtype::float64);
  EXPECT_FALSE(dtype_of_numpy(""));  // bf16 has no NumPy code
  EXPECT_FALSE(dtype_of_numpy("c8"));
}

// The gallery's subset is a column of the same table: int32, float and double, and only those
// reach a gallery visitor.
TEST(DtypeTable, GallerySubset) {
  ASSERT_EQ(kGalleryDtypes.size(), 3u);
  EXPECT_EQ(kGalleryDtypes[0], Dtype::int32);
  EXPECT_EQ(kGalleryDtypes[1], Dtype::float32);
  EXPECT_EQ(kGalleryDtypes[2], Dtype::float64);
  EXPECT_EQ(parse_dtype("int8", /*gallery_only=*/true), std::nullopt);
  EXPECT_EQ(parse_dtype("int8"), Dtype::int8);
  std::size_t visited = 0;
  for (Dtype d : kGalleryDtypes) with_gallery_dtype(d, [&]<class T>() { visited += sizeof(T); });
  EXPECT_EQ(visited, 4u + 4u + 8u);
  EXPECT_THROW(with_gallery_dtype(Dtype::half, []<class T>() {}), std::invalid_argument);
}

TEST(OpTable, RowsAndLabSubset) {
  ASSERT_EQ(kAllOps.size(), 7u);
  EXPECT_EQ(op_choices(), "sum, prod, min, max, mean, argmin, argmax");
  EXPECT_EQ(op_choices(/*lab_only=*/true), "sum, min, max");
  for (OpKind op : kAllOps) {
    EXPECT_EQ(parse_op(name(op)), op);
    with_op(op, [&]<class Tag>() {
      EXPECT_EQ(op_of<Tag>, op);
      EXPECT_STREQ(reducelab::op_name<Tag>(), std::string(name(op)).c_str());
    });
  }
  EXPECT_EQ(parse_op("MEAN"), OpKind::mean);
  EXPECT_FALSE(parse_op("avg"));
  for (OpKind op : kLabOps)
    with_lab_op(op, [&]<class Tag>() { EXPECT_EQ((Combine<Tag, int>::kind), op); });
  EXPECT_THROW(with_lab_op(OpKind::prod, []<class Tag>() {}), std::invalid_argument);
}

// A lab row is all the kernels need: its Combine is made from the row's identity and combine
// for every accumulator type the gallery uses, and its tag and combine are reachable from the
// row's id (the vendor rows of bench go that way).
template <class T>
void expect_lab_rows_make_combines() {
  for (OpKind op : kLabOps)
    with_lab_op(op, [&]<class Tag>() {
      using C = Combine<Tag, T>;
      static_assert(std::is_same_v<typename C::value_type, T>);
      static_assert(std::is_same_v<tag_t<C::kind>, Tag>);
      static_assert(std::is_same_v<combine_t<C::kind, T>, C>);
      constexpr T identity = C::identity();
      for (T x : {T(-7), T(0), T(1), T(42)}) {
        EXPECT_EQ(C{}(identity, x), x) << name(op);
        EXPECT_EQ(C{}(x, identity), x) << name(op);
      }
      EXPECT_EQ(C{}(T(3), T(5)), C{}(T(5), T(3))) << name(op);
      EXPECT_EQ(C{}(C{}(T(2), T(-9)), T(4)), C{}(T(2), C{}(T(-9), T(4)))) << name(op);
    });
}

TEST(Ops, EveryLabRowMakesACombine) {
  expect_lab_rows_make_combines<int>();
  expect_lab_rows_make_combines<long long>();
  expect_lab_rows_make_combines<float>();
  expect_lab_rows_make_combines<double>();
  static_assert(top<float>() == std::numeric_limits<float>::infinity());
  static_assert(bottom<int>() == std::numeric_limits<int>::lowest());
}
