// adam: Adam on the mean-field velocity (MODEL.md §10), coordinate by
// coordinate, with g = G = (M L) dR/dtheta + lambda theta of the step's risk
// (full or minibatch) and t = 1, 2, ...:
//
//   m = beta1 m + (1 - beta1) g,      v = beta2 v + (1 - beta2) g^2,
//   theta -= dtau (m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + eps).
//
// m, v and t are its state: written with every snapshot, read by a restart.
// Rounding: compiled without floating-point contraction (CMakeLists.txt), so
// every coordinate rounds as the formulas read, on any rank.
#include "mft/train/optimizer.hpp"

#include <cmath>
#include <cstdio>

namespace mft {

MFT_OPTIMIZER(adam, kMinibatches, "Adam on the velocity, train.beta1, train.beta2, train.eps")
MFT_KEY(beta1, double, 0.9, unit_interval, "adam: decay of the first moment, in [0, 1)")
MFT_KEY(beta2, double, 0.999, unit_interval, "adam: decay of the second moment, in [0, 1)")
MFT_KEY(eps, double, 1e-8, positive_real, "adam: epsilon of the denominator")

namespace {

// The names of state()'s arrays, in order: the moments.
constexpr const char *kStateArrays[] = {"m", "v"};

class Adam final : public Optimizer {
public:
  Adam(StepGradient &gradient, const TrainConfig &config)
      : gradient_(gradient), dtau_(config.dtau), beta1_(config.beta1), beta2_(config.beta2), eps_(config.eps),
        m_(static_cast<size_t>(gradient.local_size()), 0.0), v_(m_) {}

  void step(long long step, double *theta) override {
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

  std::string describe() const override {
    char text[160];
    std::snprintf(text, sizeof text, "adam (beta1 %g, beta2 %g, eps %g", beta1_, beta2_, eps_);
    std::string out = text;
    if (gradient_.minibatches()) out += ", " + gradient_.describe_batches();
    return out + ")";
  }

  OptimizerState state() override {
    return {&t_, {{kStateArrays[0], &m_}, {kStateArrays[1], &v_}}, {kStateArrays[1]}}; // v: a mean of squares
  }

private:
  StepGradient &gradient_;
  double dtau_, beta1_, beta2_, eps_;
  long long t_ = 0;
  std::vector<double> m_, v_;
};

} // namespace

OptimizerEntry adam_optimizer() {
  return {[](const Config &config, StepGradient &gradient) -> std::unique_ptr<Optimizer> {
            return std::make_unique<Adam>(gradient, config.train);
          },
          {true, {kStateArrays[0], kStateArrays[1]}},
          nullptr};
}

} // namespace mft
