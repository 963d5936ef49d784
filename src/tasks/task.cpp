#include "mft/tasks/task.hpp"

#include "mft/tasks/data.hpp"
#include "mft/tasks/families.hpp"
#include "mft/tasks/teacher.hpp"

namespace mft {

TaskData make_task_data(const Config &config, MPI_Comm comm) {
  const long long d = config.model.d, d_out = config.readout.dim;
  TaskData out;
  if (config.data.task == "teacher") {
    out.train = make_teacher_data(config, comm);
    out.test = split_off(out.train, config.data.sequences);
  } else if (config.data.task == "families") {
    out.train = make_families(config); // validate() refuses held-out families
    out.test = TokenData{0, out.train.n, d, d_out, {}, {}};
  } else {
    out.train = make_data(config.data, d, d_out, &out.test);
  }
  return out;
}

} // namespace mft
