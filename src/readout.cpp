#include "mft/readout.hpp"

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

double Readout::risk(const TokenData &data, const double *X1) const {
  const std::vector<double> yhat = predict(data, X1);
  double r = 0.0;
  for (long long i = 0; i < data.N; ++i) {
    const double e = yhat[i] - data.targets[i];
    r += e * e;
  }
  return r / (2.0 * static_cast<double>(data.N));
}

} // namespace mft
