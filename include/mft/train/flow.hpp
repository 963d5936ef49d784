#pragma once
// Training as the conditional Wasserstein gradient flow (MODEL.md §6): every
// particle moves inside its own slice with d theta/d tau = -G(theta),
// integrated in training time tau by a PETSc TS (options prefix "train_"),
// one TSStep per training step. Fixed steps dtau, so explicit Euler is
// gradient descent with step dtau and all ranks take the same steps.
//
// The same integrator runs `sgd` (Euler on step k's minibatch, from
// StepGradient; optimizers/sgd.cpp) and mean-field Langevin (train.temperature T > 0, Euler-
// Maruyama): after the drift step, theta += sqrt(2 T dtau) xi (langevin.hpp).
#include "mft/core/config.hpp"
#include "mft/core/petsc_handle.hpp"
#include "mft/train/optimizer.hpp"

#include <petscts.h>

#include <exception>
#include <string>

namespace mft {

struct FlowContext {
  StepGradient *gradient = nullptr;
  long long step = 0; // the training step being taken
  std::exception_ptr error;
};

// The training TS's type as the options database (-train_ts_type) chooses
// it over train.ts_type: what the flow integrates with, and what a run's
// resolved configuration records. InputError for a type that is not
// explicit, or one other than Euler with a temperature.
std::string resolve_training_ts(const TrainConfig &train);

class GradientFlow : public Optimizer {
public:
  // Throws InputError for a TS type that is not explicit (-train_ts_type),
  // one other than Euler with a temperature, or with `euler_only` (sgd: the
  // flow's Euler step on minibatches).
  GradientFlow(StepGradient &gradient, const Config &config, bool euler_only);
  GradientFlow(const GradientFlow &) = delete;
  GradientFlow &operator=(const GradientFlow &) = delete;

  void step(long long step, double *theta) override;
  std::string describe() const override;
  const std::string &ts_type() const { return ts_type_; }

protected:
  // `method` and the Langevin noise, for the run header.
  std::string describe_as(const std::string &method) const;
  const StepGradient &gradient() const { return *ctx_.gradient; }

private:
  FlowContext ctx_;
  PetscTS ts_;
  PetscVec theta_;
  std::string method_, ts_type_;
  double dtau_ = 0.0, temperature_ = 0.0;
  std::uint64_t seed_ = 0;
};

} // namespace mft
