// families: one sequence per member of a family of distributions
// (families.kind; tasks/families.hpp), the member's parameter over its N
// sequences, scalar targets. It spans its parameter range with its N
// sequences, so it has none to hold out.
#include "mft/tasks/task.hpp"

#include "mft/core/error.hpp"
#include "mft/tasks/families.hpp"

namespace mft {

MFT_TASK(families, "families", 0, "one member of a family of distributions of families.kind per sequence")

namespace {

TaskData make(const Config &config, MPI_Comm) {
  TaskData out;
  out.train = make_families(config);
  out.test = TokenData{0, out.train.n, config.model.d, config.readout.dim, {}, {}, 0, {}, {}};
  return out;
}

void check(const Config &c) {
  if (c.readout.dim != 1)
    throw InputError(key_error("readout.dim", std::to_string(c.readout.dim),
                               "data.task = families makes scalar targets (readout.dim = 1)"));
  if (c.data.test_sequences > 0)
    throw InputError(key_error("data.test_sequences", std::to_string(c.data.test_sequences),
                               "data.task = families spans a parameter range over its N sequences; "
                               "it has no further sequences to hold out"));
}

std::string describe(const Config &c) { return "families " + c.families.kind; }

PopulationCgf population(const Config &c) {
  if (!has_population_cgf(c.families.kind)) return {};
  const long long d = c.model.d;
  return [members = family_members(c), d](long long i, const double *z) {
    return population_cgf(members[static_cast<size_t>(i)], z, d);
  };
}

} // namespace

TaskEntry families_task() {
  TaskEntry entry;
  entry.make = make;
  entry.check = check;
  entry.describe = describe;
  entry.population_cgf = population;
  return entry;
}

} // namespace mft
