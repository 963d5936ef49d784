#include "mft/train/minibatch.hpp"

#include "mft/core/error.hpp"
#include "mft/core/rng.hpp"

#include <algorithm>
#include <numeric>

namespace mft {

std::vector<long long> minibatch_of_step(std::uint64_t seed, long long step, long long N, long long b) {
  if (b <= 0 || b > N || step < 0) throw Error("minibatch: needs 0 < b <= N and step >= 0");
  const long long per_pass = N / b, pass = step / per_pass, j = step % per_pass;
  std::vector<long long> order(static_cast<size_t>(N));
  std::iota(order.begin(), order.end(), 0LL);
  if (b < N) {
    // Fisher-Yates from the pass's stream; uniform() has 53 bits, so the
    // index bias is below N / 2^53.
    RandomStream rng(seed, Species::Minibatch, static_cast<std::uint64_t>(pass), 0);
    for (long long i = N - 1; i > 0; --i) {
      const auto k = std::min(i, static_cast<long long>(rng.uniform() * static_cast<double>(i + 1)));
      std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(k)]);
    }
  }
  std::vector<long long> batch(order.begin() + j * b, order.begin() + (j + 1) * b);
  std::sort(batch.begin(), batch.end());
  return batch;
}

} // namespace mft
