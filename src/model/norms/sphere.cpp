// sphere: tokens on the unit sphere (the idealised layer norm of the
// clustering literature): X(0) = x / |x| for every data token, and the
// velocity projected on the tangent space,
//
//   Pi(x) v = v - (<x, v> / |x|^2) x,        symmetric: Pi^T = Pi,
//
// so the exact flow keeps |x| (a Runge-Kutta step keeps it to its local
// error). With alpha = <x, F> / |x|^2 and gamma = <x, c> / |x|^2, the state
// term of the adjoint (d/dx of Pi(x) F at fixed F, transposed, applied to c)
// is
//
//   state(x, F, c) = -gamma F + 2 alpha gamma x - alpha c,
//
// and the normalisation's transpose takes a to (a - <a, y> y) / |x|, y = x / |x|.
#include "mft/model/token_norm.hpp"

#include "mft/core/error.hpp"

#include <algorithm>
#include <cmath>

namespace mft {

MFT_NORM(sphere, "tokens on the unit sphere: x / |x| at s = 0, the velocity projected on the tangent space")

namespace {

double dot(const double *a, const double *b, long long d) {
  double s = 0.0;
  for (long long j = 0; j < d; ++j) s += a[j] * b[j];
  return s;
}

class Sphere final : public TokenNorm {
public:
  void initial(double *X, long long tokens, long long d) const override {
    for (long long t = 0; t < tokens; ++t) {
      double *x = X + t * d;
      const double r = std::sqrt(dot(x, x, d));
      if (!(r > 0.0) || !std::isfinite(r))
        throw InputError(key_error("model.norm", "sphere", "token " + std::to_string(t) +
                                                                " of the data has norm " + std::to_string(r) +
                                                                ", which the sphere cannot take"));
      for (long long j = 0; j < d; ++j) x[j] /= r;
    }
  }

  void initial_vjp(const double *X, double *a, long long tokens, long long d) const override {
    for (long long t = 0; t < tokens; ++t) {
      const double *x = X + t * d;
      double *g = a + t * d;
      const double r = std::sqrt(dot(x, x, d)), ay = dot(g, x, d) / r;
      for (long long j = 0; j < d; ++j) g[j] = (g[j] - ay * x[j] / r) / r;
    }
  }

  void project(const double *X, double *F, long long tokens, long long d) const override {
    for (long long t = 0; t < tokens; ++t) {
      const double *x = X + t * d;
      double *f = F + t * d;
      const double alpha = dot(x, f, d) / dot(x, x, d);
      for (long long j = 0; j < d; ++j) f[j] -= alpha * x[j];
    }
  }

  double drift(const double *X, long long tokens, long long d) const override {
    double most = 0.0;
    for (long long t = 0; t < tokens; ++t) most = std::max(most, std::fabs(std::sqrt(dot(X + t * d, X + t * d, d)) - 1.0));
    return most;
  }

  void vjp(const double *X, const double *F, double *C, double *dX, long long tokens, long long d) const override {
    for (long long t = 0; t < tokens; ++t) {
      const double *x = X + t * d, *f = F + t * d;
      double *c = C + t * d, *g = dX + t * d;
      const double xx = dot(x, x, d), alpha = dot(x, f, d) / xx, gamma = dot(x, c, d) / xx;
      for (long long j = 0; j < d; ++j) {
        g[j] += -gamma * f[j] + 2.0 * alpha * gamma * x[j] - alpha * c[j];
        c[j] -= gamma * x[j];
      }
    }
  }
};

} // namespace

std::unique_ptr<TokenNorm> make_sphere_norm(const ModelConfig &) { return std::make_unique<Sphere>(); }

} // namespace mft
