#pragma once
// The MPI + PETSc lifetime of an mft program, and the bridge from PETSc's
// error codes to mft's one-line errors.
#include <petscts.h>

#include <exception>
#include <string>
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

// MPI_Init, then PetscInitialize with PETSc's share of the command line and
// an error handler that keeps PETSc's message for petsc_check instead of
// printing a trace. Finalises both on destruction. An -options_file that is
// not a readable regular file is not given to PETSc (which would print its
// error banner and abort): PETSc is not started and check() reports it.
class PetscSession {
public:
  PetscSession(int *argc, char ***argv, const std::vector<std::string> &petsc_args,
               const char *help = nullptr);
  ~PetscSession();
  PetscSession(const PetscSession &) = delete;
  PetscSession &operator=(const PetscSession &) = delete;
  // Throws the InputError of a PETSc option refused before PETSc started.
  void check() const;

private:
  std::vector<std::string> storage_;
  std::vector<char *> pointers_;
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
