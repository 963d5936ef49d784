#include "mft/train/optimizer.hpp"

#include "mft/core/error.hpp"
#include "mft/train/adam.hpp"
#include "mft/train/flow.hpp"

#include <functional>

namespace mft {
namespace {

using Factory = std::function<std::unique_ptr<Optimizer>(Config &, StepGradient &)>;

std::unique_ptr<Optimizer> make_flow(Config &config, StepGradient &gradient) {
  auto flow = std::make_unique<GradientFlow>(gradient, config);
  config.train.ts_type = flow->ts_type(); // as resolved by the options database
  return flow;
}

struct Registered {
  std::string name;
  Factory make;
  OptimizerStateLayout state;
};

// The registry: train.method -> how to build it, and what state it keeps.
const std::vector<Registered> &registry() {
  static const std::vector<Registered> table = {
      {"flow", make_flow, {}},
      {"sgd", make_flow, {}}, // the flow's Euler step; StepGradient supplies the minibatches
      {"adam", [](Config &c, StepGradient &g) { return std::make_unique<Adam>(g, c.train); },
       {true, Adam::kStateArrays}},
  };
  return table;
}

const Registered &find(const std::string &method) {
  for (const Registered &r : registry())
    if (r.name == method) return r;
  throw InputError(key_error("train.method", method, "unknown optimiser"));
}

} // namespace

std::unique_ptr<Optimizer> make_optimizer(Config &config, StepGradient &gradient) {
  return find(config.train.method).make(config, gradient);
}

std::vector<std::string> optimizer_names() {
  std::vector<std::string> out;
  for (const Registered &r : registry()) out.push_back(r.name);
  return out;
}

OptimizerStateLayout optimizer_state_layout(const std::string &method) { return find(method).state; }

} // namespace mft
