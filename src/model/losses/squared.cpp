// squared: R = (1/(2N)) sum_i |yhat_i - y_i|^2,  N dR/dyhat_i = yhat_i - y_i.
// Rounding: compiled without floating-point contraction (CMakeLists.txt),
// so where a multiply-add is fused is written here, with std::fma, and does
// not change with how the compiler vectorises the loop.
#include "mft/model/loss.hpp"

#include <cmath>

namespace mft {

MFT_LOSS(squared, "squared", 0, "|yhat - y|^2 / 2")

namespace {

class Squared final : public Loss {
public:
  double risk(const std::vector<double> &yhat, const std::vector<double> &y, long long N, long long d_out,
              double *G) const override {
    double r = 0.0;
    for (long long i = 0; i < N * d_out; ++i) {
      const double e = yhat[i] - y[i];
      r = std::fma(e, e, r);
      if (G) G[i] = e;
    }
    return r / (2.0 * static_cast<double>(N));
  }
};

} // namespace

std::unique_ptr<Loss> make_squared_loss(const LossConfig &) { return std::make_unique<Squared>(); }

} // namespace mft
