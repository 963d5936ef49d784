#pragma once
// Losses (MODEL.md §4, §10) of predictions yhat (N x d_out) against targets
// y (N x d_out), and the training accuracy of a classifier. Each loss is one
// file of src/model/losses/ with its formulas, found there by the build (see
// the end of this header).
#include "mft/core/config.hpp"

#include <memory>
#include <string>
#include <vector>

namespace mft {

class Loss {
public:
  virtual ~Loss() = default;
  // loss.kind, and whether the loss is a classifier's (then accuracy is
  // reported): from the loss's registration line.
  const std::string &name() const { return name_; }
  bool classifies() const { return classifies_; }

  // R, and G = N dR/dyhat (N x d_out) when G is given.
  virtual double risk(const std::vector<double> &yhat, const std::vector<double> &y, long long N,
                      long long d_out, double *G) const = 0;

private:
  friend std::unique_ptr<Loss> make_loss(const LossConfig &config);
  std::string name_;
  bool classifies_ = false;
};

// The loss named by loss.kind, with its keys from `config`; InputError naming
// the key for an unknown name.
std::unique_ptr<Loss> make_loss(const LossConfig &config);

// Share of i whose argmax_c yhat_ic equals argmax_c y_ic (the first of equal
// maxima); 0 for N = 0.
double accuracy(const std::vector<double> &yhat, const std::vector<double> &y, long long N,
                long long d_out);

} // namespace mft

// A loss's file src/model/losses/ID.cpp holds, at the start of a line, its
// registration line (read by the build: cmake/registries.cmake)
//   MFT_LOSS(ID, "name", TRAITS, "help for --help: the loss's formula")
// with TRAITS the LossTrait flags of core/registry.hpp (0 for none), and
// a line MFT_KEY(key, type, default, check, "help") for each loss.KEY it owns
// (a member of LossConfig), and defines make_ID_loss(const LossConfig &config)
// in namespace mft.
#define MFT_LOSS(id, name, traits, help)
