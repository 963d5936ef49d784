#pragma once
// Losses (MODEL.md §4, §10) of predictions yhat (N x d_out) against targets
// y (N x d_out), and the training accuracy of a classifier:
//   squared:       R = (1/(2N)) sum_i |yhat_i - y_i|^2,          N dR/dyhat_i = yhat_i - y_i
//   cross-entropy: R = (1/N) sum_i [lse(yhat_i) - <y_i, yhat_i>], N dR/dyhat_i = softmax(yhat_i) - y_i
// A loss registers by name in loss.cpp; adding one touches that file alone.
#include <memory>
#include <string>
#include <vector>

namespace mft {

class Loss {
public:
  virtual ~Loss() = default;
  virtual const char *name() const = 0;
  // Whether the loss is a classifier's (then accuracy is reported).
  virtual bool classifies() const = 0;

  // R, and G = N dR/dyhat (N x d_out) when G is given.
  virtual double risk(const std::vector<double> &yhat, const std::vector<double> &y, long long N,
                      long long d_out, double *G) const = 0;
};

// The loss named by loss.kind (squared, cross-entropy).
std::unique_ptr<Loss> make_loss(const std::string &name);

// Share of i whose argmax_c yhat_ic equals argmax_c y_ic (the first of equal
// maxima); 0 for N = 0.
double accuracy(const std::vector<double> &yhat, const std::vector<double> &y, long long N,
                long long d_out);

} // namespace mft
