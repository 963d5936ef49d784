#include "mft/model/readout.hpp"

#include <algorithm>

namespace mft {

Readout::Readout(const Config &config)
    : Readout(config.readout.kind, config.readout.dim, config.readout_coord(),
              config.readout_weights()) {}

Readout::Readout(std::string kind, long long d_out, long long coord, std::vector<double> weights)
    : kind_(std::move(kind)), d_out_(d_out), coord_(coord), weights_(std::move(weights)) {}

std::vector<double> Readout::predict(const TokenData &data, const double *X1) const {
  std::vector<double> yhat(static_cast<size_t>(data.N * d_out_), 0.0);
  const long long n = data.n, d = data.d;
  for (long long i = 0; i < data.N; ++i) {
    const double *X = X1 + i * n * d;
    for (long long k = 0; k < d_out_; ++k) {
      if (kind_ == "query") {
        yhat[i * d_out_ + k] = X[(n - 1) * d + coord_ + k];
        continue;
      }
      const double *w = weights_.data() + k * d;
      double s = 0.0;
      for (long long j = 0; j < n; ++j)
        for (long long q = 0; q < d; ++q) s += w[q] * X[j * d + q];
      yhat[i * d_out_ + k] = s / static_cast<double>(n);
    }
  }
  return yhat;
}

void Readout::pull_back(const TokenData &data, const double *G, double divisor, double *dX1) const {
  const long long n = data.n, d = data.d;
  std::fill(dX1, dX1 + data.N * n * d, 0.0);
  for (long long i = 0; i < data.N; ++i) {
    double *a = dX1 + i * n * d;
    const double *g = G + i * d_out_;
    if (kind_ == "query") {
      for (long long k = 0; k < d_out_; ++k) a[(n - 1) * d + coord_ + k] = g[k] / divisor;
      continue;
    }
    // a_j = W^T g / (divisor n), the same for every token j.
    for (long long q = 0; q < d; ++q) {
      double s = 0.0;
      for (long long k = 0; k < d_out_; ++k) s += g[k] * weights_[k * d + q];
      const double v = s / (divisor * static_cast<double>(n));
      for (long long j = 0; j < n; ++j) a[j * d + q] = v;
    }
  }
}

void Readout::unit_cotangent(const TokenData &data, long long i, long long k, double *dX1) const {
  const long long n = data.n, d = data.d;
  std::fill(dX1, dX1 + data.N * n * d, 0.0);
  double *a = dX1 + i * n * d;
  if (kind_ == "query") {
    a[(n - 1) * d + coord_ + k] = 1.0;
  } else {
    for (long long j = 0; j < n; ++j)
      for (long long q = 0; q < d; ++q) a[j * d + q] = weights_[k * d + q] / static_cast<double>(n);
  }
}

} // namespace mft
