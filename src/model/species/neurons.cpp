// The MLP neuron species: its matrices, stream, NTK group and initial
// scales (the kernel is in mlp.cpp). model.mlp_particles = 0 leaves it out.
#include "mft/model/neurons.hpp"

namespace mft {

MFT_SPECIES(neurons, "mlp", "MLP neurons w = (W1, W2), model.mlp_particles per slice (0: none)")

NeuronParticles::NeuronParticles(long long L_, long long M_, long long d_f_, long long d_, ParticleBlock own_)
    : ParticleSpecies("neurons", Species::Neurons, L_, M_, own_,
                      {{"W1", d_f_, d_, "mlp", "L, M_f, d_f, d", "neuron particles (with the MLP): W1",
                        {"model.slices", "model.mlp_particles", "model.mlp_width", ""}},
                       {"W2", d_, d_f_, "mlp", "L, M_f, d, d_f", "neuron particles (with the MLP): W2",
                        {"model.slices", "model.mlp_particles", "", "model.mlp_width"}}}),
      d_f(d_f_), d(d_) {}

std::unique_ptr<ParticleSpecies> make_neurons_species(const SpeciesSetup &setup) {
  const ModelConfig &m = setup.model;
  auto neurons = std::make_unique<NeuronParticles>(m.slices, m.mlp_particles, m.mlp_width, m.d,
                                                   setup.share(m.mlp_particles));
  if (setup.init) neurons->set_sigmas({setup.init->sigma_w1, setup.init->sigma_w2});
  return neurons;
}

} // namespace mft
