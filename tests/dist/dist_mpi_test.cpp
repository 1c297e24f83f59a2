// reducelab::dist's MPI path on the CPU backend, run under `mpirun -np 3`: every rank builds the
// same array, reduces its shard of random splits (empty shards included) for every type and op,
// and checks the bits against cpu::reduce of the whole array; then ranks that disagree must all
// fail with one line. Exit status 0 only if every rank passed.
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include "dist_support.hpp"
#include "reducelab/dist.hpp"

namespace {

using namespace rltest;
namespace rdist = reducelab::dist;

int failures = 0;
int checks = 0;

template <class T, class Op>
void check(rdist::Transport& t, std::uint64_t n, std::uint64_t seed) {
  using R = result_t<T, Op>;
  const auto x = dist_input<T, Op>(n, seed);
  const auto one = cpu::reduce(x.data(), n, Op{}, 1);
  const auto off = random_split(n, t.size(), seed ^ 0xabcdef);
  const int r = t.rank();
  const T* p = off[r + 1] > off[r] ? x.data() + off[r] : nullptr;
  const auto got = rdist::cpu::reduce(p, off[r + 1] - off[r], Op{}, t, rdist::Options{}, 1);
  ++checks;
  const bool ok = got.status.ok() == one.status.ok() &&
                  (!one.status.ok() ? got.status.code() == one.status.code() : same_bits(got.value, one.value));
  if (!ok) {
    ++failures;
    std::fprintf(stderr, "rank %d: %s %s n=%llu: %s vs one process %s (%s)\n", r, type_name<T>().c_str(), op_name<Op>(),
                 static_cast<unsigned long long>(n), show(got.value).c_str(), show(one.value).c_str(),
                 got.status.message().c_str());
  }
}

template <class T>
void check_type(rdist::Transport& t) {
  const std::uint64_t tile = reducelab::detail::Shape<T>::kTile;
  for (std::uint64_t n : {std::uint64_t(0), std::uint64_t(1), std::uint64_t(77), tile + 3, 7 * tile + 1}) {
    const std::uint64_t seed = n * 7 + sizeof(T);
    check<T, op::sum>(t, n, seed);
    check<T, op::prod>(t, n, seed + 1);
    check<T, op::min>(t, n, seed + 2);
    check<T, op::max>(t, n, seed + 3);
    check<T, op::mean>(t, n, seed + 4);
    check<T, op::argmin>(t, n, seed + 5);
    check<T, op::argmax>(t, n, seed + 6);
  }
  if constexpr (is_floating<T>) check<T, op::prod>(t, 1100 * tile + 9, 99);  // many chunks, halos
}

}  // namespace

int main() {
  std::unique_ptr<rdist::Transport> t;
  if (Status s = rdist::mpi_transport(&t); !s) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 1;
  }
  check_type<std::int8_t>(*t);
  check_type<std::int16_t>(*t);
  check_type<std::int32_t>(*t);
  check_type<std::int64_t>(*t);
  check_type<std::uint8_t>(*t);
  check_type<std::uint16_t>(*t);
  check_type<std::uint32_t>(*t);
  check_type<std::uint64_t>(*t);
  check_type<half>(*t);
  check_type<bfloat16>(*t);
  check_type<float>(*t);
  check_type<double>(*t);

  // Disagreement: the last rank reduces int32 where the others reduce float; all must fail.
  std::vector<float> f(100, 1.f);
  std::vector<std::int32_t> i(100, 1);
  const int last = t->size() - 1;
  const Status s = t->rank() == last && last > 0 ? rdist::cpu::reduce(i.data(), i.size(), op::sum{}, *t).status
                                                 : rdist::cpu::reduce(f.data(), f.size(), op::sum{}, *t).status;
  ++checks;
  const std::string want = "rank " + std::to_string(last) + " reduces int32 but rank 0 reduces float";
  if (last > 0 && (s.ok() || s.message().find(want) == std::string::npos)) {
    ++failures;
    std::fprintf(stderr, "rank %d: expected \"%s\", got \"%s\"\n", t->rank(), want.c_str(), s.message().c_str());
  }

  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (t->rank() == 0)
    std::printf("dist over MPI, %d ranks: %d checks per rank, %d failures in all\n", t->size(), checks, all);
  return all == 0 ? 0 : 1;
}
