// mean: yhat_i = W (1/n) sum_j x_ij(1), W in R^{d_out x d} (readout.weights;
// by default the rows e_c .. e_{c+d_out-1}); its transpose gives every token
// j the same cotangent W^T g / n.
#include "mft/model/readout.hpp"

#include <algorithm>
#include <utility>

namespace mft {

MFT_READOUT(mean, "mean", kWeighted, "W times the mean token")

namespace {

class Mean final : public Readout {
public:
  Mean(long long d_out, long long coord, std::vector<double> weights) : Readout(d_out, coord, std::move(weights)) {}

  std::vector<double> predict(const TokenData &data, const double *X1) const override {
    std::vector<double> yhat(static_cast<size_t>(data.N * d_out_), 0.0);
    const long long n = data.n, d = data.d;
    for (long long i = 0; i < data.N; ++i) {
      const double *X = X1 + i * n * d;
      for (long long k = 0; k < d_out_; ++k) {
        const double *w = weights_.data() + k * d;
        double s = 0.0;
        for (long long j = 0; j < n; ++j)
          for (long long q = 0; q < d; ++q) s += w[q] * X[j * d + q];
        yhat[i * d_out_ + k] = s / static_cast<double>(n);
      }
    }
    return yhat;
  }

  void pull_back(const TokenData &data, const double *G, double divisor, double *dX1) const override {
    const long long n = data.n, d = data.d;
    for (long long i = 0; i < data.N; ++i) {
      double *a = dX1 + i * n * d;
      const double *g = G + i * d_out_;
      // a_j = W^T g / (divisor n), the same for every token j.
      for (long long q = 0; q < d; ++q) {
        double s = 0.0;
        for (long long k = 0; k < d_out_; ++k) s += g[k] * weights_[k * d + q];
        const double v = s / (divisor * static_cast<double>(n));
        for (long long j = 0; j < n; ++j) a[j * d + q] = v;
      }
    }
  }

  void unit_cotangent(const TokenData &data, long long i, long long k, double *dX1) const override {
    const long long n = data.n, d = data.d;
    std::fill(dX1, dX1 + data.N * n * d, 0.0);
    for (long long j = 0; j < n; ++j)
      for (long long q = 0; q < d; ++q) dX1[(i * n + j) * d + q] = weights_[k * d + q] / static_cast<double>(n);
  }
};

} // namespace

std::unique_ptr<Readout> make_mean_readout(const Config &config) {
  return std::make_unique<Mean>(config.readout.dim, config.readout_coord(), config.readout_weights());
}

} // namespace mft
