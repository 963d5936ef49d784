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
  out.test = TokenData{0, out.train.n, config.model.d, config.readout.dim, {}, {}};
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

} // namespace

TaskEntry families_task() { return {make, nullptr, check, nullptr, nullptr, nullptr}; }

} // namespace mft
