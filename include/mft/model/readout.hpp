#pragma once
// Readout and risk (MODEL.md §4).
//   query: yhat_i = x_{i,n}(1)[c], coordinate c of the last token;
//   mean:  yhat_i = w^T (1/n) sum_j x_ij(1);
//   R = (1/(2N)) sum_i |yhat_i - y_i|^2.
#include "mft/core/config.hpp"
#include "mft/model/tokens.hpp"

#include <string>
#include <vector>

namespace mft {

class Readout {
public:
  Readout(const Config &config);
  Readout(std::string kind, long long coord, std::vector<double> weights);

  // yhat (N) from the final tokens X1 (N x n x d).
  std::vector<double> predict(const TokenData &data, const double *X1) const;
  // R at the final tokens X1 and, when dX1 is given, the terminal cotangent
  // a(1) = dR/dX(1) (N x n x d, overwritten):
  //   query: a_{i,n}[c] = (yhat_i - y_i)/N;  mean: a_ij = (yhat_i - y_i) w / (N n).
  double risk(const TokenData &data, const double *X1, double *dX1 = nullptr) const;

  // dX1 = d yhat_i / dX(1) (N x n x d, overwritten): zero but sequence i.
  void unit_cotangent(const TokenData &data, long long i, double *dX1) const;


private:
  std::string kind_;
  long long coord_;
  std::vector<double> weights_;
};

} // namespace mft
