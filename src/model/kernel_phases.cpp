#include "mft/model/kernel_phases.hpp"

#include "mft/core/config.hpp"
#include "mft/model/score_map.hpp"
#include "query_tile.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>

namespace mft {
namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Seconds per call of f(r), the fastest of 10 rounds of `calls` calls.
double fastest(long long calls, const std::function<void(long long)> &f) {
  f(0);
  double best = 1e300;
  for (int round = 0; round < 10; ++round) {
    const double t0 = now();
    for (long long r = 0; r < calls; ++r) f(r);
    best = std::min(best, (now() - t0) / static_cast<double>(calls));
  }
  return best;
}

} // namespace

std::vector<KernelPhase> time_attention_phases(long long n, long long d, long long heads,
                                               const std::string &attention, double seconds) {
  const long long Mp = (heads + lanes - 1) / lanes * lanes;
  const std::unique_ptr<ScoreMap> map = make_score_map(attention, false);
  // Deterministic inputs of the sizes a kernel sees, scores of order one.
  AlignedDoubles X(static_cast<size_t>(n * d)), Z(static_cast<size_t>(n * d * Mp)), G(Z.size()),
      S(static_cast<size_t>(n * Mp)), T(S.size()), S0(S.size()), T0(S.size()), Y(static_cast<size_t>(d * Mp)),
      Ta(Y.size()), E(static_cast<size_t>(n * d * lanes)), column_max(static_cast<size_t>(Mp)),
      scale(static_cast<size_t>(Mp), 1.0), work(static_cast<size_t>(2 * Mp));
  for (size_t i = 0; i < X.size(); ++i) X[i] = std::sin(0.7 * static_cast<double>(i) + 0.3);
  for (size_t i = 0; i < Z.size(); ++i) {
    Z[i] = 0.4 * std::cos(1.3 * static_cast<double>(i));
    G[i] = std::sin(0.9 * static_cast<double>(i) + 1.0);
  }
  const double *max_in = map->uses_column_max() ? column_max.data() : nullptr;
  double *max_out = map->uses_column_max() ? column_max.data() : nullptr;
  // One phase ~ seconds / 8 for the 7 phases and the copies.
  const double pairs = static_cast<double>(n * Mp), products = 2.0 * static_cast<double>(n * d * Mp);
  const long long calls = std::max<long long>(10, static_cast<long long>(seconds / 80 / (pairs * 1e-9)));
  std::vector<KernelPhase> out;
  const auto add = [&](const char *name, double t, double flops, bool per_score) {
    out.push_back({name, t * 1e9, flops, per_score ? t * 1e9 / pairs : 0.0});
  };
  const auto restore = [&] {
    std::copy(S0.begin(), S0.end(), S.begin());
    std::copy(T0.begin(), T0.end(), T.begin());
  };
  query_tile::with_token_dim(d, [&](auto dim) {
    const auto za = [&](long long r) { return Z.data() + (r % n) * d * Mp; };
    const auto ga = [&](long long r) { return G.data() + (r % n) * d * Mp; };
    add("scores", fastest(calls, [&](long long r) { query_tile::scores(X.data(), dim, za(r), Mp, n, S.data(), max_out); }),
        products, false);
    query_tile::scores_pair(X.data(), dim, Z.data(), G.data(), Mp, n, S0.data(), T0.data(), max_out);
    const double copies = fastest(calls, [&](long long) { restore(); });
    add("weights", fastest(calls, [&](long long) {
          restore();
          map->weights(S.data(), n, Mp, max_in, work.data(), scale.data());
        }) - copies,
        0.0, true);
    add("mix", fastest(calls, [&](long long) { query_tile::mix(X.data(), dim, S.data(), scale.data(), Mp, n, Y.data()); }),
        products, false);
    add("scores_pair",
        fastest(calls, [&](long long r) {
          query_tile::scores_pair(X.data(), dim, za(r), ga(r), Mp, n, S.data(), T.data(), max_out);
        }),
        2 * products, false);
    add("weights_cotangent", fastest(calls, [&](long long) {
          restore();
          map->weights_and_cotangent(S.data(), T.data(), n, Mp, max_in, work.data(), scale.data());
        }) - copies,
        0.0, true);
    add("mix_pair", fastest(calls, [&](long long) {
          query_tile::mix_pair(X.data(), dim, S.data(), scale.data(), T.data(), Mp, n, Y.data(), Ta.data());
        }),
        2 * products, false);
    add("spread", fastest(calls, [&](long long r) {
          query_tile::spread(T.data(), S.data(), scale.data(), za(r), ga(r), dim, Mp, n, E.data());
        }),
        2 * products, false);
  });
  return out;
}

} // namespace mft
