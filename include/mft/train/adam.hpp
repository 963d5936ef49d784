#pragma once
// Adam on the mean-field velocity (MODEL.md §10), coordinate by coordinate,
// with g = G = (M L) dR/dtheta + lambda theta of the step's risk (full or
// minibatch) and t = 1, 2, ...:
//
//   m = beta1 m + (1 - beta1) g,      v = beta2 v + (1 - beta2) g^2,
//   theta -= dtau (m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + eps).
//
// m, v and t are its state: written with every snapshot, read by a restart.
#include "mft/train/optimizer.hpp"

namespace mft {

class Adam : public Optimizer {
public:
  Adam(StepGradient &gradient, const TrainConfig &config);

  void step(long long step, double *theta) override;
  std::string describe() const override;
  // The names of state()'s arrays, in order.
  static inline const std::vector<std::string> kStateArrays = {"m", "v"};
  OptimizerState state() override { return {&t_, {{kStateArrays[0], &m_}, {kStateArrays[1], &v_}}}; }

private:
  StepGradient &gradient_;
  double dtau_, beta1_, beta2_, eps_;
  long long t_ = 0;
  std::vector<double> m_, v_;
};

} // namespace mft
