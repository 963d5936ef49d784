// The attention head species: its matrices, stream, NTK groups and initial
// scales (the kernel is in attention.cpp).
#include "mft/model/heads.hpp"

#include <algorithm>
#include <cmath>
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

// The scales left to the sizes (MODEL.md §9): the scores a_ab = <Q x_a, K x_b>
// of tokens with O(1) entries have standard deviation sigma_qk^2 d sqrt(d_h),
// and the velocity's entries V ybar about sigma_v sqrt(d); above d = d_h = 8
// each is kept at its value there (sigma_qk = 0.5, sigma_v = 1), below it the
// scales stay those values.
void resolve_heads_scales(InitConfig &init, const ModelConfig &m) {
  const double d = static_cast<double>(m.d), d_h = static_cast<double>(m.head_dim);
  if (init.sigma_qk == kScaledWithSizes)
    init.sigma_qk = 0.5 * std::min(1.0, std::sqrt(8.0 / d) * std::pow(8.0 / d_h, 0.25));
  if (init.sigma_v == kScaledWithSizes) init.sigma_v = std::min(1.0, std::sqrt(8.0 / d));
}

std::unique_ptr<ParticleSpecies> make_heads_species(const SpeciesSetup &setup) {
  const ModelConfig &m = setup.model;
  auto heads = std::make_unique<HeadParticles>(m.slices, setup.heads, m.head_dim, m.d, setup.share(setup.heads));
  if (setup.init) {
    InitConfig init = *setup.init;
    resolve_heads_scales(init, m);
    heads->set_sigmas({init.sigma_qk, init.sigma_qk, init.sigma_v});
  }
  return heads;
}

} // namespace mft
