#pragma once
// The data tasks of data.task (MODEL.md §1): each task is one file of
// src/tasks/data_tasks/, found there by the build (see the end of this
// header), that makes a run's training sequences and, with
// data.test_sequences (or a data file's test split), its held-out ones, and
// says what it checks and decides of the configuration.
#include "mft/core/config.hpp"
#include "mft/core/registry.hpp"
#include "mft/model/tokens.hpp"
#include "mft/tasks/data.hpp"
#include "mft/tasks/symbols.hpp"

#include <mpi.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace mft {

struct TaskData {
  TokenData train;
  TokenData test; // N = 0: no held-out data
};

// Memory a task holds while it makes its data, per rank, for the estimate.
struct TaskMemory {
  std::string what;
  long double bytes = 0;
  std::string key, value; // the key that sets its size ("": the data's)
};

// Lambda_i(z) of sequence i at z (d values).
using PopulationCgf = std::function<double(long long i, const double *z)>;

// A registered task: what it does (null: the default).
struct TaskEntry {
  // Its training and held-out sequences. Collective on comm. Null: a task
  // of sequences drawn one by one (kStreams), training sequence i from
  // (data.seed, i), held-out sequence i from (data.test_seed, i).
  TaskData (*make)(const Config &config, MPI_Comm comm) = nullptr;
  // `count` sequences, sequence i from stream_of(i) (kStreams tasks: their
  // sets and the online batches).
  TokenData (*sequences)(const Config &config, long long count, const SequenceStreams &stream_of) = nullptr;
  // The checks of the task's keys beside the key table's (after the sizes
  // are resolved); InputError naming a key.
  void (*check)(const Config &config) = nullptr;
  // What the task decides of the sizes (a data file's N, n, d and held-out
  // N); null: the keys.
  void (*resolve_sizes)(Config &config) = nullptr;
  // The files it reads, as (key, path): an output must not be one of them.
  std::vector<std::pair<std::string, std::string>> (*inputs)(const Config &config) = nullptr;
  // What it holds while it makes the data, per rank of `head_ranks` x
  // `groups`; `data_bytes` and `stages`: the data's size and the depth
  // scheme's stages.
  std::vector<TaskMemory> (*memory)(const Config &config, int head_ranks, int groups, long double data_bytes,
                                    long double stages) = nullptr;
  // The task in the run headers (families: "families cube"); null: its name.
  std::string (*describe)(const Config &config) = nullptr;
  // The closed-form cumulant generating function Lambda_i(z) of sequence
  // i's token distribution, z in R^d (the population log-sum-exp test), or
  // an empty function when the task has none; null: none.
  PopulationCgf (*population_cgf)(const Config &config) = nullptr;
  // A task of symbols: the held-out cross-entropies of the predictors the
  // model is measured against (symbols.hpp), on its held-out sequences;
  // null: none.
  std::vector<Baseline> (*baselines)(const Config &config, const TokenData &test) = nullptr;
};

// The task of config.data.task: its data, its checks, its sizes, its inputs,
// its memory.
TaskData make_task_data(const Config &config, MPI_Comm comm);
void check_task(const Config &config);
void resolve_task_sizes(Config &config);
std::vector<std::pair<std::string, std::string>> task_inputs(const Config &config);
std::vector<TaskMemory> task_memory(const Config &config, int head_ranks, int groups, long double data_bytes,
                                    long double stages);
std::string describe_task(const Config &config);
PopulationCgf task_population_cgf(const Config &config);
std::vector<Baseline> task_baselines(const Config &config, const TokenData &test);

} // namespace mft

// A task's file src/tasks/data_tasks/ID.cpp holds, at the start of a line,
// its registration line (read by the build: cmake/registries.cmake)
//   MFT_TASK(ID, "name", TRAITS, "help for --help")
// with TRAITS the TaskTrait flags of core/registry.hpp (0 for none), and
// defines TaskEntry ID_task() in namespace mft.
#define MFT_TASK(id, name, traits, help)
