#pragma once
// Readouts (MODEL.md §4, §10): the prediction yhat_i in R^{d_out} of
// sequence i from its tokens at s = 1, and the transpose that pulls a
// cotangent of yhat back to the tokens. Each readout is one file of
// src/model/readouts/ with its formula, found there by the build (see the
// end of this header).
#include "mft/core/config.hpp"
#include "mft/core/registry.hpp"
#include "mft/model/tokens.hpp"

#include <memory>
#include <string>
#include <vector>

namespace mft {

class Readout {
public:
  virtual ~Readout() = default;
  long long dim() const { return d_out_; }
  // The predictions per sequence: the loss sees N predictions() rows of
  // dim() / predictions() values (1 but for the next-token readout).
  long long predictions() const { return predictions_; }

  // yhat (N x d_out) from the final tokens X1 (N x n x d).
  virtual std::vector<double> predict(const TokenData &data, const double *X1) const = 0;

  // dX1 (N x n x d, overwritten) = sum_ik (G_ik / divisor) d yhat_ik / dX(1)
  // for a cotangent G (N x d_out) of yhat. The losses pass G = N dR/dyhat
  // and divisor N, which keeps the squared loss's rounding of e / N.
  virtual void pull_back(const TokenData &data, const double *G, double divisor, double *dX1) const = 0;

  // dX1 = d yhat_ik / dX(1) (N x n x d, overwritten): zero but sequence i.
  virtual void unit_cotangent(const TokenData &data, long long i, long long k, double *dX1) const = 0;

protected:
  // d_out outputs, the first coordinate c (resolved: 0 <= c <= d - d_out)
  // and W (d_out x d row-major, resolved: Config::readout_weights).
  Readout(long long d_out, long long coord, std::vector<double> weights, long long predictions = 1)
      : d_out_(d_out), coord_(coord), predictions_(predictions), weights_(std::move(weights)) {}
  long long d_out_, coord_, predictions_;
  std::vector<double> weights_;
};

// The readout of readout.kind with the configuration's outputs,
// coordinates and weights; InputError naming the key for an unknown kind.
std::unique_ptr<Readout> make_readout(const Config &config);

} // namespace mft

// A readout's file src/model/readouts/ID.cpp holds, at the start of a
// line, its registration line (read by the build: cmake/registries.cmake)
//   MFT_READOUT(ID, "name", TRAITS, "help for --help")
// with TRAITS the ReadoutTrait flags of core/registry.hpp (0 for none), and
// a line MFT_KEY(key, type, default, check, "help") for each readout.KEY it
// owns (a member of ReadoutConfig), and defines
// make_ID_readout(const Config &config) in namespace mft.
#define MFT_READOUT(id, name, traits, help)
