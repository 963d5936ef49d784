// The MLP neuron species: its matrices, stream, NTK group and initial
// scales (the kernel is in mlp.cpp). model.mlp_particles = 0 leaves it out.
#include "mft/model/neurons.hpp"

#include <algorithm>
#include <cmath>

namespace mft {

MFT_SPECIES(neurons, "mlp", "MLP neurons w = (W1, W2), model.mlp_particles per slice (0: none)")

NeuronParticles::NeuronParticles(long long L_, long long M_, long long d_f_, long long d_, ParticleBlock own_)
    : ParticleSpecies("neurons", Species::Neurons, L_, M_, own_,
                      {{"W1", d_f_, d_, "mlp", "L, M_f, d_f, d", "neuron particles (with the MLP): W1",
                        {"model.slices", "model.mlp_particles", "model.mlp_width", ""}},
                       {"W2", d_, d_f_, "mlp", "L, M_f, d, d_f", "neuron particles (with the MLP): W2",
                        {"model.slices", "model.mlp_particles", "", "model.mlp_width"}}}),
      d_f(d_f_), d(d_) {}

// The scales left to the sizes (MODEL.md §9): W1 x has entries of standard
// deviation sigma_1 sqrt(d) for tokens with O(1) entries, and W2 act(W1 x)
// about sigma_2 sqrt(d_f) act's scale; above d = d_f = 8 each is kept at its
// value there (0.5), below it the scales stay 0.5.
void resolve_neurons_scales(InitConfig &init, const ModelConfig &m) {
  const auto kept = [](long long size) { return 0.5 * std::min(1.0, std::sqrt(8.0 / static_cast<double>(size))); };
  if (init.sigma_w1 == kScaledWithSizes) init.sigma_w1 = kept(m.d);
  if (init.sigma_w2 == kScaledWithSizes) init.sigma_w2 = m.mlp_width > 0 ? kept(m.mlp_width) : 0.5;
}

std::unique_ptr<ParticleSpecies> make_neurons_species(const SpeciesSetup &setup) {
  const ModelConfig &m = setup.model;
  auto neurons = std::make_unique<NeuronParticles>(m.slices, m.mlp_particles, m.mlp_width, m.d,
                                                   setup.share(m.mlp_particles));
  if (setup.init) {
    InitConfig init = *setup.init;
    resolve_neurons_scales(init, m);
    neurons->set_sigmas({init.sigma_w1, init.sigma_w2});
  }
  return neurons;
}

} // namespace mft
