#pragma once
// Training as the conditional Wasserstein gradient flow (MODEL.md §6): every
// particle moves inside its own slice with d theta/d tau = velocity(theta),
// integrated in training time tau by a PETSc TS (options prefix "train_").
//
// The TS state is an MPI Vec whose local part is this rank's particles; its
// right-hand side is one forward and one adjoint solve in depth. Fixed steps
// dtau, so explicit Euler is gradient descent with step dtau and all ranks
// take the same steps.
#include "mft/core/config.hpp"
#include "mft/core/petsc_handle.hpp"
#include "mft/train/objective.hpp"
#include "mft/train/velocity.hpp"

#include <petscts.h>

#include <exception>
#include <functional>
#include <string>

namespace mft {

// What the flow reports at a point: R (and training accuracy) and Q and the
// velocity's norm of velocity.hpp.
struct ParticleState {
  double risk = 0.0;
  double accuracy = 0.0;
  double objective = 0.0;
  double grad_norm = 0.0;
};

// Called at the initial state and after every step, with the state there.
using FlowMonitor = std::function<void(long long step, double tau, const ParticleState &state)>;

// Called after every step; true stops the flow there (the monitor still
// sees the state after that step).
using FlowStopCheck = std::function<bool(long long step)>;

struct FlowContext {
  Objective *objective = nullptr;
  double lambda = 0.0;
  Velocity velocity;            // at the objective's last point
  long long velocity_of = -1;   // the objective evaluation it belongs to
  ParticleState state;
  FlowMonitor monitor;
  FlowStopCheck stop_check;
  long long first_step = 0; // step number of the flow's start (restarts)
  double dtau = 0.0;        // tau = step * dtau, exactly, on any restart
  bool stopped = false;
  std::exception_ptr error;
};

class GradientFlow {
public:
  // The flow of §6 with weight decay config.lambda. Throws InputError for a
  // type that is not explicit (-train_ts_type).
  GradientFlow(MPI_Comm comm, Objective &objective, const TrainConfig &config);
  GradientFlow(const GradientFlow &) = delete;
  GradientFlow &operator=(const GradientFlow &) = delete;

  void set_monitor(FlowMonitor monitor) { ctx_.monitor = std::move(monitor); }
  void set_stop_check(FlowStopCheck check) { ctx_.stop_check = std::move(check); }

  // Takes up to `steps` steps from the particles theta (this rank's, flat)
  // at step `first_step` (tau = first_step dtau); theta ends as the final
  // particles. Returns the number of steps taken (fewer when the stop check
  // asked to stop). Collective.
  long long run(double *theta, long long steps, long long first_step = 0);
  bool stopped() const { return ctx_.stopped; }

  const std::string &ts_type() const { return ts_type_; }

private:
  FlowContext ctx_;
  PetscTS ts_;
  PetscVec theta_;
  std::string ts_type_;
};

} // namespace mft
