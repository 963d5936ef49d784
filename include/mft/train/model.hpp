#pragma once
// A configured model on this rank: its data, particles, depth field, depth
// solver and readout, as every command builds it (runs/build_model.hpp).
#include "mft/depth/depth.hpp"
#include "mft/model/field.hpp"
#include "mft/model/particles.hpp"
#include "mft/model/readout.hpp"
#include "mft/model/tokens.hpp"

#include <memory>

namespace mft {

struct Model {
  TokenData data;
  std::unique_ptr<Particles> particles;
  std::unique_ptr<DepthField> field;
  std::unique_ptr<DepthSolver> solver;
  std::unique_ptr<Readout> readout;
};

} // namespace mft
