#include "mft/train/adam.hpp"

#include <cmath>
#include <cstdio>

namespace mft {

Adam::Adam(StepGradient &gradient, const TrainConfig &config)
    : gradient_(gradient), dtau_(config.dtau), beta1_(config.beta1), beta2_(config.beta2), eps_(config.eps),
      m_(static_cast<size_t>(gradient.local_size()), 0.0), v_(m_) {}

// Rounding: compiled without floating-point contraction (CMakeLists.txt), so
// every coordinate rounds as the formulas read, on any rank.
void Adam::step(long long step, double *theta) {
  const Velocity &velocity = gradient_.velocity(step, theta);
  ++t_;
  const double c1 = 1.0 - std::pow(beta1_, static_cast<double>(t_));
  const double c2 = 1.0 - std::pow(beta2_, static_cast<double>(t_));
  const std::vector<double> &minus_g = velocity.values; // -G
  for (size_t i = 0; i < m_.size(); ++i) {
    const double g = -minus_g[i];
    m_[i] = beta1_ * m_[i] + (1.0 - beta1_) * g;
    v_[i] = beta2_ * v_[i] + (1.0 - beta2_) * (g * g);
    theta[i] -= dtau_ * (m_[i] / c1) / (std::sqrt(v_[i] / c2) + eps_);
  }
}

std::string Adam::describe() const {
  char text[160];
  std::snprintf(text, sizeof text, "adam (beta1 %g, beta2 %g, eps %g", beta1_, beta2_, eps_);
  std::string out = text;
  if (gradient_.minibatches()) out += ", " + gradient_.describe_batches();
  return out + ")";
}

} // namespace mft
