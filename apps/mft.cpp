// mft: mean-field transformer particle solver. This program only parses the
// command line and calls the library.
#include "mft/runs/command_line.hpp"
#include "mft/runs/commands.hpp"
#include "mft/core/async_output.hpp"
#include "mft/core/config.hpp"
#include "mft/core/blas_info.hpp"
#include "mft/core/error.hpp"
#include "mft/core/petsc_session.hpp"
#include "mft/io/petsc_outputs.hpp"
#include "mft/runs/run_file.hpp"
#include "mft/core/signals.hpp"
#include "mft/core/version.hpp"

#include <algorithm>
#include <iostream>
#include <new>
#include <string>
#include <unistd.h>

// cpu_features.cpp: the features the start-up check tests (cpu_check.cpp).
extern "C" const char mft_compiled_cpu_features[];

namespace {

const char *kUsage =
    "usage: mpirun -n P mft COMMAND [--config FILE] [--section.key VALUE ...] [-petsc_option ...]\n"
    "\n"
    "commands:\n"
    "  train     train the particles by the gradient flow in training time tau (the main job)\n"
    "  forward   integrate the token measures through depth s in [0,1] at the initial\n"
    "            particles, print the risk R and write the HDF5 run file\n"
    "  ntk       the NTK Gram (M L) J J^T at the initial particles, what [B] makes of it;\n"
    "            --cgf adds the log-sum-exp injectivity test\n"
    "--from FILE [--snapshot S] gives forward, ntk and train a trained model: its keys,\n"
    "data and the particles of a snapshot of the run file FILE (default: the last).\n"
    "\n"
    "Keys come from built-in defaults, then the INI file, then the command line.\n"
    "mft train --restart FILE continues the run in FILE from its last snapshot with\n"
    "FILE's keys; mft train --resume continues output.file if it exists.\n"
    "--dry-run checks everything and prints the resolved configuration; it writes nothing.\n"
    "Exit codes: 0 done, 1 run failure, 2 bad input, 4 diverged (non-finite values),\n"
    "75 stopped early by SIGTERM, SIGINT, SIGUSR1 or train.max_walltime (the file is\n"
    "complete; --restart it).\n"
    "Single-dash options go to PETSc (e.g. -depth_ts_type rk -depth_ts_rk_type 4,\n"
    "-depth_ts_monitor, -log_view); one that nothing reads is refused.\n"
    "`mft COMMAND --help` lists the keys and options COMMAND reads, `mft --keys` every\n"
    "key's name, `mft --choices KEY` the values KEY accepts when they are a list (the\n"
    "score maps of model.attention, the optimisers of train.method, ...), `mft\n"
    "--key-reference` every key as Markdown (docs/CONFIG.md), `mft --format-reference`\n"
    "the run file's tables (docs/FORMAT.md),\n"
    "`mft --petsc-help` PETSc's options of mft's integrators.\n";

int run(int argc, char **argv, const std::vector<std::string> &args, int rank) {
  if (args.empty())
    throw mft::InputError(mft::key_error("command", "", "missing: mft train, forward or ntk (mft --help)"));
  if (std::find(args.begin(), args.end(), "--petsc-help") != args.end()) {
    mft::print_petsc_help(); // PETSc prints, on rank 0
    return 0;
  }
  if (args[0] == "--help") {
    if (rank == 0) std::cout << kUsage;
    return 0;
  }
  if (args[0] == "--version") {
    if (rank == 0)
      std::cout << "mft " << mft::kVersion << "\n"
                << "compiled for " << mft::kCompiledFor << "\n"
                << "BLAS: " << mft::blas_provenance() << "\n"
                << "CPU features it was compiled to use:" << (*mft_compiled_cpu_features ? "" : " none beyond x86-64")
                << mft_compiled_cpu_features << "\n";
    return 0;
  }
  if (args[0] == "--key-reference") { // docs/CONFIG.md
    if (rank == 0) std::cout << mft::key_reference_markdown();
    return 0;
  }
  if (args[0] == "--format-reference") { // docs/FORMAT.md's tables
    if (rank == 0) std::cout << mft::format_reference_markdown();
    return 0;
  }
  if (args[0] == "--choices") { // the registered names of a key, for scripts and tests
    const std::string key = args.size() > 1 ? args[1] : "";
    if (args.size() != 2 || !mft::is_config_key(key))
      throw mft::InputError(mft::key_error("--choices", args.size() > 2 ? args[2] : key,
                                           "takes one key (mft --keys lists them): mft --choices model.attention"));
    const std::vector<std::string> names = mft::key_choices(key);
    if (names.empty())
      throw mft::InputError(mft::key_error("--choices", key, "takes any value of its type, not one of a list"));
    if (rank == 0)
      for (const std::string &name : names) std::cout << name << "\n";
    return 0;
  }
  if (args[0] == "--keys") { // for tools that check keys (sweep tables)
    if (rank == 0)
      for (const mft::ConfigEntry &e : mft::config_entries(mft::Config{})) std::cout << e.key << "\n";
    return 0;
  }
  const std::string command = args[0];
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  const mft::CommandEntry *entry = mft::find_command(command);
  if (!entry)
    throw mft::InputError(mft::key_error("command", command, "unknown: mft " + mft::command_names() + " (mft --help)"));

  mft::CommandOptions options;
  options.command = command;
  mft::Config config = mft::parse_config(rest, &options);
  if (options.help) {
    if (rank == 0) std::cout << mft::command_help(command);
    return 0;
  }
  mft::RunInfo info = mft::make_run_info(MPI_COMM_WORLD, argc, argv);
  info.config_file = options.config_file;
  // Progress lines never block a rank: under mpirun, a job being shut down
  // is not read from, and the ranks must still reach their stop snapshot.
  std::cout.flush();
  mft::AsyncOutput output(STDOUT_FILENO);
  std::ostream *log = &output.stream();
  return entry->run(MPI_COMM_WORLD, config, options, info, log);
}

} // namespace

int main(int argc, char **argv) {
  // First of all: a stop asked for while MPI and PETSc start is remembered
  // and ends the set-up in one line (exit 75), never a kill.
  mft::install_stop_handlers();
  const mft::SplitArguments split = mft::split_arguments(argc, argv);
  // PETSc's outputs, judged before it opens any (again once the run's files
  // are known): never a file the command line or --config names.
  const auto check_outputs = [&](const std::vector<mft::PetscOption> &options,
                                 const std::vector<std::string> &options_files) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    mft::InputFiles files = mft::files_named_by(split.mft);
    for (const std::string &file : options_files) files.push_back({"-options_file", file});
    return mft::check_petsc_outputs(options, rank, files, true);
  };
  mft::PetscSession session(&argc, &argv, split.petsc, check_outputs);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  try {
    session.check();
    return run(argc, argv, split.mft, rank);
  } catch (const mft::StoppedAtStartup &e) {
    if (rank == 0) std::cerr << "mft: " << e.what() << std::endl;
    return mft::kExitStopped;
  } catch (const mft::Error &e) {
    // mft's errors are raised on every rank alike: report once, exit cleanly.
    if (rank == 0) std::cerr << "mft: error: " << e.what() << std::endl;
    if (e.exit_code() == 2) session.discard_outputs(); // bad input leaves nothing behind
    return e.exit_code();
  } catch (const std::bad_alloc &) {
    // One rank short of memory while the others may wait in a collective
    // call: the whole job ends, in one line.
    mft::abort_job("rank " + std::to_string(rank) +
                   " could not allocate memory (the node's memory, a Slurm allocation or ulimit -v ran out); "
                   "run.max_memory bounds what the run may plan for");
  } catch (const std::exception &e) {
    std::cerr << "mft: internal error on rank " << rank << ": " << e.what() << std::endl;
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  return 3;
}
