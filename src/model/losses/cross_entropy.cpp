// cross-entropy: R = (1/N) sum_i [lse(yhat_i) - <y_i, yhat_i>],
//                N dR/dyhat_i = softmax(yhat_i) - y_i,
// with y_i a probability vector (one-hot for classes): a classifier's loss,
// of readout.dim >= 2 classes.
#include "mft/model/loss.hpp"

#include <algorithm>
#include <cmath>

namespace mft {

MFT_LOSS(cross_entropy, "cross-entropy", kClassifies, "logsumexp(yhat) - <y, yhat>, y a probability vector")

namespace {

class CrossEntropy final : public Loss {
public:
  double risk(const std::vector<double> &yhat, const std::vector<double> &y, long long N, long long d_out,
              double *G) const override {
    double r = 0.0;
    for (long long i = 0; i < N; ++i) {
      const double *z = yhat.data() + i * d_out, *t = y.data() + i * d_out;
      const double mx = *std::max_element(z, z + d_out);
      double sum = 0.0, dot = 0.0;
      for (long long c = 0; c < d_out; ++c) {
        sum += std::exp(z[c] - mx);
        dot += t[c] * z[c];
      }
      r += mx + std::log(sum) - dot;
      if (!G) continue;
      for (long long c = 0; c < d_out; ++c) G[i * d_out + c] = std::exp(z[c] - mx) / sum - t[c];
    }
    return r / static_cast<double>(N);
  }
};

} // namespace

std::unique_ptr<Loss> make_cross_entropy_loss(const LossConfig &) { return std::make_unique<CrossEntropy>(); }

} // namespace mft
