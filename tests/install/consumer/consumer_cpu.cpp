// Reduces on the CPU through an installed reducelab: a whole array, rows and columns.
#include <cstdio>
#include <vector>

#include "reducelab/reduce.hpp"
#include "reducelab/segments.hpp"
#include "reducelab/version.hpp"

int main() {
  std::vector<float> x(3 * 1000);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = float(i % 7);  // each row of 1000 sums to 2997
  const float total = reducelab::cpu::reduce(x.data(), x.size(), reducelab::op::sum{}).value;
  std::vector<float> rows(3);
  const auto st = reducelab::cpu::reduce_axis(x.data(), reducelab::Matrix{3, 1000, 0}, 1, reducelab::op::sum{}, rows.data());
  std::printf("reducelab %s: sum %.1f, rows %.1f %.1f %.1f\n", reducelab::version_string, total, rows[0], rows[1], rows[2]);
  if (total != 8994.0f || !st || rows[0] != 2997.0f || rows[1] != 2998.0f || rows[2] != 2999.0f) {
    std::printf("consumer_cpu: wrong result\n");
    return 1;
  }
  return 0;
}
