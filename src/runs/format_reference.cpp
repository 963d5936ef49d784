// docs/FORMAT.md's tables of what a training run writes, from the tables the
// writer itself reads: the species' matrices (/particles), the history
// columns (/history) and the optimisers' state (/optimizer).
#include "mft/runs/command_line.hpp"

#include "mft/core/error.hpp"
#include "mft/core/registry.hpp"
#include "mft/model/particles.hpp"
#include "mft/runs/history_columns.hpp"
#include "mft/train/optimizer.hpp"

#include <sstream>

namespace mft {
namespace {

// A table cell: a `|` in the text would end it.
std::string cell(std::string text) {
  for (size_t at = 0; (at = text.find('|', at)) != std::string::npos; at += 2) text.replace(at, 1, "\\|");
  return text;
}

} // namespace

std::string format_reference_markdown() {
  std::ostringstream s;
  // Every species a model can have.
  const Particles layout = every_species_layout(ModelConfig{});
  s << "| path | shape | species | NTK group | meaning |\n|---|---|---|---|---|\n"
    << "| `/particles/step` | (S,) int64 | | | the training step of each snapshot (0: the initial particles) |\n"
    << "| `/particles/tau` | (S,) | | | its training time tau |\n";
  for (const ParticleSpecies *species : layout.species())
    for (const ParticleMatrix &m : species->matrices())
      s << "| `/particles/" << m.name << "` | (S, " << m.shape << ") | `" << species->name() << "` | "
        << m.ntk_part << " | " << cell(m.meaning) << " |\n";

  s << "\n| path | shape | present | meaning |\n|---|---|---|---|\n";
  for (const HistoryColumn &c : history_columns())
    s << "| `/history/" << c.name << "` | " << (c.length ? c.shape : "(T,)") << " | " << (*c.when ? c.when : "every run") << " | " << cell(c.meaning)
      << " |\n";

  s << "\n| train.method | arrays `/optimizer/<array>_<D>` | counter `/optimizer/t` |\n|---|---|---|\n";
  for (const RegistryEntry &e : optimizer_entries()) {
    const OptimizerStateLayout state = optimizer_state_layout(e.name);
    s << "| `" << e.name << "` | " << (state.arrays.empty() ? "none" : "`" + comma_list(state.arrays) + "`")
      << " | " << (state.counter ? "yes" : "no") << " |\n";
  }
  return s.str();
}

} // namespace mft
