// none: tokens in R^d, X(0) the data's tokens, the velocity as the field
// gives it.
#include "mft/model/token_norm.hpp"

namespace mft {

MFT_NORM(none, "tokens in R^d")

namespace {

class NoNorm final : public TokenNorm {
public:
  bool identity() const override { return true; }
  void initial(double *, long long, long long) const override {}
  void initial_vjp(const double *, double *, long long, long long) const override {}
  void project(const double *, double *, long long, long long) const override {}
  void vjp(const double *, const double *, double *, double *, long long, long long) const override {}
  double drift(const double *, long long, long long) const override { return 0.0; }
};

} // namespace

std::unique_ptr<TokenNorm> make_none_norm(const ModelConfig &) { return std::make_unique<NoNorm>(); }

} // namespace mft
