#pragma once
// Helpers shared by the tests: small problems and an independent reference
// of the attention field written plainly from MODEL.md §3.
#include "mft/core/lanes.hpp"
#include "mft/depth/depth.hpp"
#include "mft/model/heads.hpp"
#include "mft/model/score_map.hpp"
#include "mft/runs/build_problem.hpp"
#include "mft/runs/command_line.hpp"
#include "mft/tasks/data.hpp"
#include "mft/train/objective.hpp"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace mft::test {

// The score map and mask of MODEL.md §10 as the reference sees them.
struct Variant {
  std::string attention = "softmax"; // model.attention: any registered score map
  bool causal = false;               // model.causal
};

// One query token's weights P_a. (seen) from its scores, and the scores'
// cotangents from T_ab = <g_a, x_b>, by the score map's own per-token formula
// applied to one row alone (lane 0 of a vector's rows, the others zero): the
// reference shares the map's formula, not the kernel's tiling, blocking or
// products. The formula itself is checked on its own (the map's cotangent
// against finite differences of its weights, test_attention.cpp) and
// against the NumPy reference (scripts/check_gradient_step.py).
class ScoreRow {
public:
  explicit ScoreRow(const std::string &attention) : map_(make_score_map(attention, false)) {}
  // s (seen values) becomes P in place.
  void weights(double *s, long long seen) const {
    std::vector<double> S(static_cast<size_t>(seen * lanes), 0.0), work(4 * lanes);
    for (long long b = 0; b < seen; ++b) S[b * lanes] = s[b];
    map_->probabilities(S.data(), seen, lanes, work.data());
    for (long long b = 0; b < seen; ++b) s[b] = S[b * lanes];
  }
  // t (seen values T_ab) becomes ds_ab in place, for the weights p of weights().
  void cotangent(const double *p, double *t, long long seen) const {
    std::vector<double> P(static_cast<size_t>(seen * lanes), 0.0), T(P), work(2 * lanes);
    for (long long b = 0; b < seen; ++b) P[b * lanes] = p[b], T[b * lanes] = t[b];
    map_->cotangent(P.data(), nullptr, T.data(), seen, lanes, work.data());
    for (long long b = 0; b < seen; ++b) t[b] = T[b * lanes];
  }
  bool bounded() const { return map_->bounded(); }

private:
  std::unique_ptr<ScoreMap> map_;
};

// Q x, K x (n x d_h each) and the weights P (n x n), from the scores
// S_ab = <Q x_a, K x_b>, of one head on one sequence (tokens X, n x d): the score map's
// weights over the tokens b that a sees, 0 elsewhere. Plain loops.
inline void reference_attention(const double *Q, const double *K, long long d_h, long long d,
                                const double *X, long long n, std::vector<double> &qx,
                                std::vector<double> &kx, std::vector<double> &P,
                                const Variant &variant = {}) {
  const ScoreRow map(variant.attention);
  qx.assign(n * d_h, 0.0);
  kx.assign(n * d_h, 0.0);
  P.assign(n * n, 0.0);
  for (long long a = 0; a < n; ++a)
    for (long long h = 0; h < d_h; ++h)
      for (long long j = 0; j < d; ++j) {
        qx[a * d_h + h] += Q[h * d + j] * X[a * d + j];
        kx[a * d_h + h] += K[h * d + j] * X[a * d + j];
      }
  for (long long a = 0; a < n; ++a) {
    const long long seen = variant.causal ? a + 1 : n;
    for (long long b = 0; b < seen; ++b) {
      double s = 0;
      for (long long h = 0; h < d_h; ++h) s += qx[a * d_h + h] * kx[b * d_h + h];
      P[a * n + b] = s;
    }
    map.weights(P.data() + a * n, seen);
  }
}

// phi_theta[mu](x_a) = V sum_b P_ab x_b, P the weights of the scores
// <Q x_a, K x_b>, for one head on one sequence (tokens X, n x d), accumulated
// into out (n x d) times `scale`. Plain loops, Q x and K x apart: nothing of
// the kernel's but the score map's per-token formula.
inline void reference_head(const double *Q, const double *K, const double *V, long long d_h,
                           long long d, const double *X, long long n, double scale, double *out,
                           const Variant &variant = {}) {
  std::vector<double> qx, kx, P, y(d);
  reference_attention(Q, K, d_h, d, X, n, qx, kx, P, variant);
  for (long long a = 0; a < n; ++a) {
    std::fill(y.begin(), y.end(), 0.0);
    for (long long b = 0; b < n; ++b)
      for (long long j = 0; j < d; ++j) y[j] += P[a * n + b] * X[b * d + j];
    for (long long k = 0; k < d; ++k) {
      double s = 0;
      for (long long j = 0; j < d; ++j) s += V[k * d + j] * y[j];
      out[a * d + k] += scale * s;
    }
  }
}

// The configuration of `args`, then each of `defaults` (option, value) that
// `extra` does not give, then `extra`.
inline mft::Config config_with(std::vector<std::string> args,
                               const std::vector<std::pair<std::string, std::string>> &defaults,
                               const std::vector<std::string> &extra) {
  for (const auto &[key, value] : defaults)
    if (std::find(extra.begin(), extra.end(), key) == extra.end()) args.insert(args.end(), {key, value});
  args.insert(args.end(), extra.begin(), extra.end());
  return mft::parse_config(args);
}

// R, dR/dtheta (this rank's share) and dR/dX0 at the initial particles of
// `config`'s problem, and its depth solver's segment count.
struct GradientAt {
  std::vector<double> dR, dX0;
  double risk = 0;
  long long segments = 0;
  bool mixed_precision = false;
};

inline GradientAt gradient_at(mft::Config config) {
  mft::Problem problem = mft::build_problem(MPI_COMM_WORLD, config, true);
  mft::Objective objective(problem);
  std::vector<double> theta(problem.particles->local_size());
  problem.particles->pack(theta.data());
  const mft::Gradient &g = objective.at(theta.data());
  return {g.dR, g.dX0, g.risk, problem.solver->segment_count(), problem.field_options.mixed_precision};
}

// Largest |a - b| over max(|b|), the relative error of a whole array.
inline double relative_error(const std::vector<double> &a, const std::vector<double> &b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num = std::max(num, std::fabs(a[i] - b[i]));
    den = std::max(den, std::fabs(b[i]));
  }
  return den > 0 ? num / den : num;
}

} // namespace mft::test

namespace mft::test {

// The transposed products of reference_head for the cotangent c (n x d) of
// its output (already times the head's weight `scale`), written plainly from
// MODEL.md §5 and §10: dQ, dK (d_h x d), dV (d x d) and dX (n x d) are
// accumulated. The score cotangent ds_ab comes from T_ab = <g_a, x_b> by the
// score map's own formula (ScoreRow); 0 off the mask.
inline void reference_head_vjp(const double *Q, const double *K, const double *V, long long d_h,
                               long long d, const double *X, long long n, double scale,
                               const double *c, double *dQ, double *dK, double *dV, double *dX,
                               const Variant &variant = {}) {
  std::vector<double> qx, kx, P, ybar(n * d), g(n * d), ds(n);
  reference_attention(Q, K, d_h, d, X, n, qx, kx, P, variant);
  const ScoreRow map(variant.attention);
  for (long long a = 0; a < n; ++a) {
    for (long long j = 0; j < d; ++j) {
      double y = 0;
      for (long long b = 0; b < n; ++b) y += P[a * n + b] * X[b * d + j];
      ybar[a * d + j] = y;
    }
    // g_a = scale V^T c_a; dV += scale c_a ybar_a^T
    for (long long j = 0; j < d; ++j) {
      double s = 0;
      for (long long k = 0; k < d; ++k) s += V[k * d + j] * c[a * d + k];
      g[a * d + j] = scale * s;
    }
    for (long long k = 0; k < d; ++k)
      for (long long j = 0; j < d; ++j) dV[k * d + j] += scale * c[a * d + k] * ybar[a * d + j];
  }
  for (long long a = 0; a < n; ++a) {
    const long long seen = variant.causal ? a + 1 : n;
    for (long long b = 0; b < seen; ++b) {
      double gx = 0;
      for (long long j = 0; j < d; ++j) gx += g[a * d + j] * X[b * d + j];
      ds[b] = gx;
    }
    map.cotangent(P.data() + a * n, ds.data(), seen);
    for (long long b = 0; b < seen; ++b) {
      const double p = P[a * n + b];
      // ybar_a = sum_b P_ab x_b: x_b gets P_ab g_a.
      for (long long j = 0; j < d; ++j) dX[b * d + j] += p * g[a * d + j];
      // s_ab = <Q x_a, K x_b>
      for (long long h = 0; h < d_h; ++h)
        for (long long j = 0; j < d; ++j) {
          dQ[h * d + j] += ds[b] * kx[b * d_h + h] * X[a * d + j];
          dK[h * d + j] += ds[b] * qx[a * d_h + h] * X[b * d + j];
          dX[a * d + j] += ds[b] * Q[h * d + j] * kx[b * d_h + h];
          dX[b * d + j] += ds[b] * K[h * d + j] * qx[a * d_h + h];
        }
    }
  }
}

// The flat particle vector (Particles::pack: the species in order, each
// matrix in its [l][m] order): the range [begin, end) of the entries of the
// NTK group `part` (V, QK, mlp: contiguous).
inline std::pair<long long, long long> ntk_part_range(const mft::Particles &p, const std::string &part) {
  long long at = 0, begin = -1, end = -1;
  for (const mft::ParticleSpecies *s : p.species())
    for (size_t k = 0; k < s->matrices().size(); ++k) {
      const auto size = static_cast<long long>(s->values(k).size());
      if (s->matrices()[k].ntk_part == part) {
        if (begin < 0) begin = at;
        end = at + size;
      }
      at += size;
    }
  return {begin, end};
}

// M L of the species that owns entry i of the flat particle vector (the
// time scale its gradient is multiplied by).
inline double time_scale_at(const mft::Particles &p, long long i) {
  for (const mft::ParticleSpecies *s : p.species()) {
    if (i < s->local_size()) return s->time_scale();
    i -= s->local_size();
  }
  return 0.0;
}

// A particle system of attention heads alone.
inline mft::Particles heads_only(mft::HeadParticles heads) {
  std::vector<std::unique_ptr<mft::ParticleSpecies>> list;
  const long long d = heads.d;
  list.push_back(std::make_unique<mft::HeadParticles>(std::move(heads)));
  return mft::Particles(std::move(list), d);
}

} // namespace mft::test
