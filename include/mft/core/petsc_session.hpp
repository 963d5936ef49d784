#pragma once
// The MPI + PETSc lifetime of an mft program, and the bridge from PETSc's
// error codes to mft's one-line errors.
#include <petscts.h>

#include <exception>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace mft {

// The command line split in two: what mft parses itself (the subcommand,
// `--section.key value`, `--help`) and what goes to PETSc's options database
// (`-name [value]`, e.g. -depth_ts_monitor or -log_view). `-h` and `-help`
// are mft's --help; `--petsc-help` stays mft's and puts -help in PETSc's.
struct SplitArguments {
  std::vector<std::string> mft;   // without the program name
  std::vector<std::string> petsc; // without the program name
};
SplitArguments split_arguments(int argc, const char *const *argv);

// A PETSc option: its name without the dash, and its value ("" if none).
using PetscOption = std::pair<std::string, std::string>;

// The options PETSc will read from PETSC_OPTIONS and `words` (PETSc's share
// of the command line), each -options_file read in place the way PETSc
// reads it (whitespace-separated words, `#` to the end of a line a comment),
// in order; `options_files` receives the files read. InputError
// `-options_file = F: why` for a file that is not a readable regular file
// or includes itself (through others or not).
std::vector<PetscOption> petsc_options_of(const std::vector<std::string> &words,
                                          std::vector<std::string> *options_files = nullptr);

// Every option of PETSc's database (after PetscInitialize), in order.
std::vector<PetscOption> petsc_options_in_database();

// MPI_Init, then PetscInitialize with PETSc's share of the command line and
// an error handler that keeps PETSc's message for petsc_check instead of
// printing a trace. Finalises both on destruction. Options PETSc could not
// take (an -options_file that is not a readable regular file or includes
// itself, a -..._type without its value) and outputs `check_outputs`
// refuses are not given to PETSc (which would print its error banner,
// abort, or write): PETSc is not started and check() reports it.
// `check_outputs(options, options_files)`, run on every rank before PETSc
// starts, throws InputError for an output it refuses and returns the files
// PETSc will open on this rank as it starts (-history, -log_trace, -info).
class PetscSession {
public:
  using OutputCheck =
      std::function<std::vector<std::string>(const std::vector<PetscOption> &, const std::vector<std::string> &)>;
  PetscSession(int *argc, char ***argv, const std::vector<std::string> &petsc_args,
               const OutputCheck &check_outputs = {}, const char *help = nullptr);
  ~PetscSession();
  PetscSession(const PetscSession &) = delete;
  PetscSession &operator=(const PetscSession &) = delete;
  // Throws the InputError of a PETSc option refused before PETSc started.
  void check() const;
  // For a run refused after PETSc started: PETSc writes no log at its end,
  // and the files it created as it started are removed.
  void discard_outputs();

private:
  std::vector<std::string> storage_;
  std::vector<char *> pointers_;
  std::vector<std::string> created_at_start_; // by PetscInitialize, on this rank
  std::string refused_; // why PETSc was not started
  bool petsc_ = false;  // PETSc started
};

// After a command's set-up (every integrator made and set from the options
// database): InputError `-OPTION = VALUE: why` for the first of `given` (the
// PETSc options of the command line, names without the dash) that nothing
// read, a misspelt -depth_ts_tpye say, before anything is computed or
// written. Options from PETSC_OPTIONS, .petscrc or -options_file are not
// judged, and options PETSc reads only at its end or inside a solve
// (-log_view, -options_left, *_view*, ...) are allowed.
void refuse_unused_petsc_options(const std::string &command, const std::vector<std::string> &given);

// `--petsc-help`: with -help in the options database, makes mft's
// integrators (depth_, train_) so that PETSc prints their options.
void print_petsc_help();

// Throws mft::Error with PETSc's own message when ierr is non-zero.
void petsc_check(PetscErrorCode ierr, const char *call);

// Drops the kept PETSc message (when an error is reported another way).
void petsc_forget_message();

// Runs a PETSc call that may fail in one of mft's callbacks (which keep
// their exception in `error`, petsc_handle.hpp's `guarded`): rethrows the
// callback's own error (with its message), else PETSc's.
void petsc_call_with_callbacks(PetscErrorCode ierr, std::exception_ptr &error, const char *call);

// For a TS with options prefix `prefix` (e.g. "depth_"): sets `type`, then
// applies the options database, and returns the type in use. mft's TS are
// explicit one-step methods: a -{prefix}ts_type not in integrators.hpp's table,
// or a bad option, is an InputError naming it.
std::string set_explicit_ts_type(TS ts, const std::string &prefix, const std::string &type);

} // namespace mft

// Checks a PETSc call from C++ code that may throw (outside PETSc callbacks;
// inside them use PetscCall, as PETSc does).
#define MFT_PETSC(call) ::mft::petsc_check((call), #call)
