#include <gtest/gtest.h>

#include "reducelab/dtype.hpp"
#include "reducelab/ops.hpp"

using namespace reducelab;

TEST(Names, DtypesRoundTrip) {
  for (Dtype d : kAllDtypes) EXPECT_EQ(parse_dtype(name(d)), d);
  EXPECT_EQ(parse_dtype("INT"), Dtype::int32);
  EXPECT_EQ(parse_dtype("f64"), Dtype::float64);
  EXPECT_FALSE(parse_dtype("int33"));
  EXPECT_EQ(dtype_choices(), "int32, float, double");
}

TEST(Names, OpsRoundTrip) {
  for (OpKind op : kAllOps) EXPECT_EQ(parse_op(name(op)), op);
  EXPECT_FALSE(parse_op("mean"));
}

TEST(Ops, IdentitiesAreNeutral) {
  EXPECT_EQ(Sum<int>{}(Sum<int>::identity(), 5), 5);
  EXPECT_EQ(Min<float>{}(Min<float>::identity(), -3.5f), -3.5f);
  EXPECT_EQ(Max<long long>{}(Max<long long>::identity(), -7LL), -7LL);
  EXPECT_EQ(Min<int>::identity(), INT32_MAX);
}
