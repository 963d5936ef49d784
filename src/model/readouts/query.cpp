// query: yhat_ik = x_{i,n}(1)[c + k], coordinates c..c+d_out-1 of the last
// token (the query of in-context learning), k < d_out.
#include "mft/model/readout.hpp"

#include <algorithm>
#include <utility>

namespace mft {

MFT_READOUT(query, "query", 0, "coordinates c.. of the last token")

namespace {

class Query final : public Readout {
public:
  Query(long long d_out, long long coord, std::vector<double> weights) : Readout(d_out, coord, std::move(weights)) {}

  std::vector<double> predict(const TokenData &data, const double *X1) const override {
    std::vector<double> yhat(static_cast<size_t>(data.N * d_out_), 0.0);
    const long long n = data.n, d = data.d;
    for (long long i = 0; i < data.N; ++i)
      for (long long k = 0; k < d_out_; ++k) yhat[i * d_out_ + k] = X1[(i * n + n - 1) * d + coord_ + k];
    return yhat;
  }

  void pull_back(const TokenData &data, const double *G, double divisor, double *dX1) const override {
    const long long n = data.n, d = data.d;
    std::fill(dX1, dX1 + data.N * n * d, 0.0);
    for (long long i = 0; i < data.N; ++i)
      for (long long k = 0; k < d_out_; ++k) dX1[(i * n + n - 1) * d + coord_ + k] = G[i * d_out_ + k] / divisor;
  }

  void unit_cotangent(const TokenData &data, long long i, long long k, double *dX1) const override {
    const long long n = data.n, d = data.d;
    std::fill(dX1, dX1 + data.N * n * d, 0.0);
    dX1[(i * n + n - 1) * d + coord_ + k] = 1.0;
  }
};

} // namespace

std::unique_ptr<Readout> make_query_readout(const Config &config) {
  return std::make_unique<Query>(config.readout.dim, config.readout_coord(), config.readout_weights());
}

} // namespace mft
