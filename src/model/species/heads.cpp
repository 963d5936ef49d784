// The attention head species: its matrices, stream, NTK groups and initial
// scales (the kernel is in attention.cpp).
#include "mft/model/heads.hpp"

#include <cstdio>

namespace mft {

MFT_SPECIES(heads, "V QK", "attention heads theta = (Q, K, V), model.heads per slice")

namespace {
// The model keys each dataset dimension (L, M, rows, cols) follows.
const std::vector<std::string> qk_keys = {"model.slices", "model.heads", "model.head_dim", ""};
const std::vector<std::string> v_keys = {"model.slices", "model.heads", "", ""};
} // namespace

HeadParticles::HeadParticles(long long L_, long long M_, long long d_h_, long long d_, ParticleBlock own_)
    : ParticleSpecies("heads", Species::Heads, L_, M_, own_,
                      {{"Q", d_h_, d_, "QK", "L, M, d_h, d", "head particles: queries", qk_keys},
                       {"K", d_h_, d_, "QK", "L, M, d_h, d", "head particles: keys", qk_keys},
                       {"V", d_, d_, "V", "L, M, d, d", "head particles: values", v_keys}}),
      d_h(d_h_), d(d_) {}

std::string HeadParticles::describe() const {
  char text[128];
  std::snprintf(text, sizeof text, "M=%lld heads x L=%lld slices, d_h=%lld", M, L, d_h);
  return text;
}

std::unique_ptr<ParticleSpecies> make_heads_species(const SpeciesSetup &setup) {
  const ModelConfig &m = setup.model;
  auto heads = std::make_unique<HeadParticles>(m.slices, setup.heads, m.head_dim, m.d, setup.share(setup.heads));
  if (setup.init) heads->set_sigmas({setup.init->sigma_qk, setup.init->sigma_qk, setup.init->sigma_v});
  return heads;
}

} // namespace mft
