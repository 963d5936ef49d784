#pragma once
// Optimisers (MODEL.md §10): the training loop (trainer.hpp) asks one to
// move the particles from step k to k + 1; the gradient comes from
// StepGradient (full or minibatch risk), the update and its state belong to
// the optimiser. Registered by name (train.method): each optimiser is one
// file of src/train/optimizers/, found there by the build (see the end of
// this header).
#include "mft/core/config.hpp"
#include "mft/train/step_gradient.hpp"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace mft {

// What an optimiser keeps between steps: arrays in the flat layout of
// Particles (this rank's share) and a counter. The run file writes it with
// every particle snapshot under /optimizer and a restart reads it back, so
// a continued run takes the same steps as a straight one.
struct OptimizerState {
  long long *counter = nullptr; // e.g. Adam's t, the steps it has taken; null: none
  std::vector<std::pair<std::string, std::vector<double> *>> arrays; // by name, e.g. m, v
  std::vector<std::string> nonnegative; // the arrays that cannot hold a negative entry (a second moment)
  bool empty() const { return counter == nullptr && arrays.empty(); }
};

class Optimizer {
public:
  virtual ~Optimizer() = default;
  // theta (this rank's particles, flat) from step `step` to step + 1.
  // Collective. Throws Error naming the step when it fails.
  virtual void step(long long step, double *theta) = 0;
  // The method and its constants, for the run header.
  virtual std::string describe() const = 0;
  // The state to keep in snapshots (empty: none).
  virtual OptimizerState state() { return {}; }
};

// The optimiser of config.train.method (resolved: resolve_optimizer) over
// `gradient`. Collective; throws InputError for a method or integrator it
// cannot run.
std::unique_ptr<Optimizer> make_optimizer(const Config &config, StepGradient &gradient);

// What the method resolves of the training keys before a run starts (the
// flow: train.ts_type as the options database chooses it); the resolved
// configuration records it. InputError as make_optimizer.
void resolve_optimizer(TrainConfig &train);

// The names train.method accepts, in registry order.
std::vector<std::string> optimizer_names();

// What state() of method `method` holds: whether a counter, and the names of
// its arrays (what a run file of that method must have under /optimizer).
struct OptimizerStateLayout {
  bool counter = false;
  std::vector<std::string> arrays;
};
OptimizerStateLayout optimizer_state_layout(const std::string &method);

// A registered optimiser: how to build it, what state it keeps, and what it
// resolves of the training keys (null: nothing).
struct OptimizerEntry {
  std::unique_ptr<Optimizer> (*make)(const Config &config, StepGradient &gradient) = nullptr;
  OptimizerStateLayout state;
  void (*resolve)(TrainConfig &train) = nullptr;
};

} // namespace mft

// An optimiser's file src/train/optimizers/NAME.cpp holds, at the start of a
// line, its registration line (read by the build: cmake/registries.cmake)
//   MFT_OPTIMIZER(NAME, TRAITS, "help for --help")
// with TRAITS the OptimizerTrait flags of core/registry.hpp (0 for none), a
// line MFT_KEY(key, type, default, check, "help") for each train.KEY it owns
// (a member of TrainConfig, checked by one of the key table's parsers), and
// defines OptimizerEntry NAME_optimizer() in namespace mft.
#define MFT_OPTIMIZER(name, traits, help)
