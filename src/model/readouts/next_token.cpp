// next-token: every position t < n predicts the next symbol (MODEL.md §13):
// its logits are z_t = beta x_t(1)[0 .. k), the k symbol coordinates of the
// token times the fixed scale beta (readout.scale). yhat_i holds z_1 ..
// z_{n-1} one after the other (d_out = (n - 1) k), so a loss over rows of
// k values (predictions() = n - 1 rows per sequence) averages over every
// position; the transpose puts beta g_t into token t's first k coordinates.
#include "mft/model/readout.hpp"

#include <algorithm>
#include <utility>

namespace mft {

MFT_READOUT(next_token, "next-token", kNextToken, "every position's next symbol: beta times its first k coordinates")
MFT_KEY(scale, double, 1.0, positive_real, "next-token: the fixed scale beta of the logits beta x_t(1)[0..k)")

namespace {

class NextToken final : public Readout {
public:
  NextToken(long long d_out, long long positions, double scale)
      : Readout(d_out, 0, {}, positions), k_(d_out / positions), scale_(scale) {}

  std::vector<double> predict(const TokenData &data, const double *X1) const override {
    std::vector<double> yhat(static_cast<size_t>(data.N * d_out_));
    const long long n = data.n, d = data.d;
    for (long long i = 0; i < data.N; ++i)
      for (long long t = 0; t + 1 < n; ++t)
        for (long long c = 0; c < k_; ++c)
          yhat[static_cast<size_t>(i * d_out_ + t * k_ + c)] = scale_ * X1[(i * n + t) * d + c];
    return yhat;
  }

  void pull_back(const TokenData &data, const double *G, double divisor, double *dX1) const override {
    const long long n = data.n, d = data.d;
    std::fill(dX1, dX1 + data.N * n * d, 0.0);
    for (long long i = 0; i < data.N; ++i)
      for (long long t = 0; t + 1 < n; ++t)
        for (long long c = 0; c < k_; ++c)
          dX1[(i * n + t) * d + c] = scale_ * (G[i * d_out_ + t * k_ + c] / divisor);
  }

  void unit_cotangent(const TokenData &data, long long i, long long k, double *dX1) const override {
    const long long n = data.n, d = data.d;
    std::fill(dX1, dX1 + data.N * n * d, 0.0);
    dX1[(i * n + k / k_) * d + k % k_] = scale_;
  }

private:
  long long k_;  // symbols: the logits of one position
  double scale_; // beta
};

} // namespace

std::unique_ptr<Readout> make_next_token_readout(const Config &config) {
  return std::make_unique<NextToken>(config.readout.dim, config.data.tokens - 1, config.readout.scale);
}

} // namespace mft
