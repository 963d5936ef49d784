#include "mft/model/readout.hpp"

#include <algorithm>

namespace mft {

Readout::Readout(const Config &config)
    : Readout(config.readout.kind, config.readout_coord(), config.readout_weights()) {}

Readout::Readout(std::string kind, long long coord, std::vector<double> weights)
    : kind_(std::move(kind)), coord_(coord), weights_(std::move(weights)) {}

std::vector<double> Readout::predict(const TokenData &data, const double *X1) const {
  std::vector<double> yhat(static_cast<size_t>(data.N), 0.0);
  const long long n = data.n, d = data.d;
  for (long long i = 0; i < data.N; ++i) {
    const double *X = X1 + i * n * d;
    if (kind_ == "query") {
      yhat[i] = X[(n - 1) * d + coord_];
    } else {
      double s = 0.0;
      for (long long j = 0; j < n; ++j)
        for (long long k = 0; k < d; ++k) s += weights_[k] * X[j * d + k];
      yhat[i] = s / static_cast<double>(n);
    }
  }
  return yhat;
}

void Readout::unit_cotangent(const TokenData &data, long long i, double *dX1) const {
  const long long n = data.n, d = data.d;
  std::fill(dX1, dX1 + data.N * n * d, 0.0);
  double *a = dX1 + i * n * d;
  if (kind_ == "query") {
    a[(n - 1) * d + coord_] = 1.0;
  } else {
    for (long long j = 0; j < n; ++j)
      for (long long k = 0; k < d; ++k) a[j * d + k] = weights_[k] / static_cast<double>(n);
  }
}

double Readout::risk(const TokenData &data, const double *X1, double *dX1) const {
  const std::vector<double> yhat = predict(data, X1);
  const long long n = data.n, d = data.d;
  const double N = static_cast<double>(data.N);
  if (dX1) std::fill(dX1, dX1 + data.N * n * d, 0.0);
  double r = 0.0;
  for (long long i = 0; i < data.N; ++i) {
    const double e = yhat[i] - data.targets[i];
    r += e * e;
    if (!dX1) continue;
    double *a = dX1 + i * n * d;
    if (kind_ == "query") {
      a[(n - 1) * d + coord_] = e / N;
    } else {
      for (long long j = 0; j < n; ++j)
        for (long long k = 0; k < d; ++k) a[j * d + k] = e * weights_[k] / (N * static_cast<double>(n));
    }
  }
  return r / (2.0 * N);
}

} // namespace mft
