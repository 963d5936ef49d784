#include "mft/runs/commands.hpp"

#include "mft/core/error.hpp"
#include "mft/core/signals.hpp"
#include "mft/runs/forward_run.hpp"
#include "mft/runs/ntk_run.hpp"
#include "mft/runs/train_run.hpp"
#include "mft/train/optimizer.hpp"

namespace mft {
namespace {

bool in(const std::string &key, const char *section) { return key.rfind(section, 0) == 0; }

// What only a training run writes: the history, its snapshots, the log.
bool training_output(const std::string &key) {
  return key == "output.snapshot_every" || key == "output.history_every" || key == "output.log";
}

std::string train_about() {
  return "Trains the particles in training time tau (train.method: " + comma_list(optimizer_names()) +
         ";\ntrain.temperature > 0: Langevin) and writes output.file: /history every\n"
         "output.history_every steps, particle snapshots every output.snapshot_every.\n";
}

bool train_reads(const std::string &key) { return !in(key, "cgf.") && !in(key, "forward.") && key != "ntk.part"; }

int train(MPI_Comm comm, const Config &config, const CommandOptions &options, const RunInfo &info,
          std::ostream *log) {
  return run_train(comm, config, info, log, true, options).stopped ? kExitStopped : 0;
}

std::string forward_about() {
  return "Integrates the token measures through depth s in [0, 1] at the initial particles,\n"
         "prints the risk R and writes output.file.\n";
}

bool forward_reads(const std::string &key) {
  return !in(key, "train.") && !in(key, "ntk.") && !in(key, "cgf.") && !training_output(key);
}

int forward(MPI_Comm comm, const Config &config, const CommandOptions &options, const RunInfo &info,
            std::ostream *log) {
  run_forward(comm, config, info, log, true, options);
  return 0;
}

std::string ntk_about() {
  return "The NTK Gram matrix (M L) J J^T and its spectrum at the initial particles, or at\n"
         "a snapshot of a run file (--from); --cgf adds the log-sum-exp injectivity test.\n";
}

bool ntk_reads(const std::string &key) {
  return !in(key, "train.") && !in(key, "forward.") && key != "ntk.every" && !training_output(key);
}

int ntk(MPI_Comm comm, const Config &config, const CommandOptions &options, const RunInfo &info,
        std::ostream *log) {
  run_ntk(comm, config, options, info, log);
  return 0;
}

} // namespace

const std::vector<CommandEntry> &commands() {
  static const std::vector<CommandEntry> table = {
      {"train", train_about, train_reads, train},
      {"forward", forward_about, forward_reads, forward},
      {"ntk", ntk_about, ntk_reads, ntk},
  };
  return table;
}

const CommandEntry *find_command(const std::string &name) {
  for (const CommandEntry &c : commands())
    if (name == c.name) return &c;
  return nullptr;
}

std::string command_names() {
  std::vector<std::string> names;
  for (const CommandEntry &c : commands()) names.push_back(c.name);
  return comma_list(names);
}

} // namespace mft
