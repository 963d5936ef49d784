#pragma once
// Readouts (MODEL.md §4, §10): the prediction yhat_i in R^{d_out} of
// sequence i from its tokens at s = 1, and the transpose that pulls a
// cotangent of yhat back to the tokens.
//   query: yhat_ik = x_{i,n}(1)[c + k], coordinates c..c+d_out-1 of the last token;
//   mean:  yhat_i  = W (1/n) sum_j x_ij(1), W in R^{d_out x d}.
#include "mft/core/config.hpp"
#include "mft/model/tokens.hpp"

#include <string>
#include <vector>

namespace mft {

class Readout {
public:
  explicit Readout(const Config &config);
  // W: d_out x d row-major (used by `mean`).
  Readout(std::string kind, long long d_out, long long coord, std::vector<double> weights);

  long long dim() const { return d_out_; }

  // yhat (N x d_out) from the final tokens X1 (N x n x d).
  std::vector<double> predict(const TokenData &data, const double *X1) const;

  // dX1 (N x n x d, overwritten) = sum_ik (G_ik / divisor) d yhat_ik / dX(1)
  // for a cotangent G (N x d_out) of yhat. The losses pass G = N dR/dyhat
  // and divisor N, which keeps the squared loss's rounding of e / N.
  void pull_back(const TokenData &data, const double *G, double divisor, double *dX1) const;

  // dX1 = d yhat_ik / dX(1) (N x n x d, overwritten): zero but sequence i.
  void unit_cotangent(const TokenData &data, long long i, long long k, double *dX1) const;

private:
  std::string kind_;
  long long d_out_, coord_;
  std::vector<double> weights_;
};

} // namespace mft
