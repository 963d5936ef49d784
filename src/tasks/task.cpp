// The registry of data tasks: the entries of src/tasks/data_tasks/, listed
// by the build (cmake/registries.cmake).
#include "mft/tasks/task.hpp"

#include "mft/core/entry_table.hpp"

namespace mft {

#undef MFT_TASK
#define MFT_TASK(id, name, traits, help) TaskEntry id##_task();
#include "mft/registry/data_tasks.inc"
#undef MFT_TASK

namespace {

const EntryTable<TaskEntry> &registry() {
  static const EntryTable<TaskEntry> tasks = [] {
    EntryTable<TaskEntry> out("data.task", {
#define MFT_TASK(id, name, traits, help) {name, id##_task()},
#include "mft/registry/data_tasks.inc"
#undef MFT_TASK
                                           });
    // A task drawn from streams (its trait, which the checks across keys
    // read) is one that draws its sequences one by one.
    for (const auto &[name, entry] : out.entries())
      if (has_trait(task_entries(), name, kStreams) != (entry.sequences != nullptr))
        throw Error("data task " + name + ": its kStreams trait and its sequences function disagree");
    return out;
  }();
  return tasks;
}

const TaskEntry &find(const std::string &task) { return registry().find(task); }

} // namespace

TaskData make_task_data(const Config &config, MPI_Comm comm) {
  const TaskEntry &task = find(config.data.task);
  if (task.make) return task.make(config, comm);
  // Sequences drawn one by one: the N training ones from the streams of
  // data.seed, the held-out ones from their own (data.test_seed), so neither
  // set depends on the size of the other.
  const DataConfig &c = config.data;
  TaskData out;
  out.train = task.sequences(config, c.sequences, training_streams(c.seed));
  out.test = task.sequences(config, c.test_sequences, held_out_streams(c.test_seed));
  return out;
}

TokenData generate_sequences(const Config &config, long long count, const SequenceStreams &stream_of) {
  const TaskEntry &task = find(config.data.task);
  if (!task.sequences)
    throw InputError(key_error("data.task", config.data.task, "its sequences are not drawn one by one from streams"));
  return task.sequences(config, count, stream_of);
}

void check_task(const Config &config) {
  if (const TaskEntry &task = find(config.data.task); task.check) task.check(config);
}

void resolve_task_sizes(Config &config) {
  if (const TaskEntry &task = find(config.data.task); task.resolve_sizes) task.resolve_sizes(config);
}

std::vector<std::pair<std::string, std::string>> task_inputs(const Config &config) {
  const TaskEntry &task = find(config.data.task);
  return task.inputs ? task.inputs(config) : std::vector<std::pair<std::string, std::string>>{};
}

std::vector<TaskMemory> task_memory(const Config &config, int head_ranks, int groups, long double data_bytes,
                                    long double stages) {
  const TaskEntry &task = find(config.data.task);
  return task.memory ? task.memory(config, head_ranks, groups, data_bytes, stages) : std::vector<TaskMemory>{};
}

std::string describe_task(const Config &config) {
  const TaskEntry &task = find(config.data.task);
  return task.describe ? task.describe(config) : config.data.task;
}

std::vector<Baseline> task_baselines(const Config &config, const TokenData &test) {
  const TaskEntry &task = find(config.data.task);
  return task.baselines && test.N > 0 ? task.baselines(config, test) : std::vector<Baseline>{};
}

PopulationCgf task_population_cgf(const Config &config) {
  const TaskEntry &task = find(config.data.task);
  return task.population_cgf ? task.population_cgf(config) : PopulationCgf{};
}

} // namespace mft
