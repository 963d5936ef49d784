#pragma once
// PETSc's options that name files, under mft's output rules. PETSc writes
//  - a viewer's file: -log_view :F, -depth_ts_monitor ascii:F,
//    -depth_ts_view binary:F (and F.info beside it; `binary` alone writes
//    binaryoutput), hdf5:F, vtk:F, ... (ascii:stdout and ascii:stderr are
//    the streams);
//  - -history F, at its start (rank 0);
//  - -log_trace F and -info F[:classes], at its start: F.RANK on each rank;
//  - -malloc_view F at its end: F_RANK; -log_all at its end: Log.0;
//  - -viewer_binary_filename F: F and F.info (binary viewers' default file).
// Each such file must be a new file or a regular one, in an existing
// folder, and never one of the run's own files (its inputs, its run file,
// its configuration, its log, the options files): else InputError
// `-OPTION = VALUE: why`, before PETSc opens it. They are judged twice:
// before PETSc starts (which opens some of them), when mft knows only the
// files its command line and --config name, so that an existing HDF5 file
// is refused then too (a run file or data the configuration may name; an
// hdf5 viewer may replace one); and again once the run's files are known,
// before anything is computed.
#include "mft/core/petsc_session.hpp"
#include "mft/io/output_claim.hpp"

#include <string>
#include <vector>

namespace mft {

// A file PETSc writes for one option.
struct PetscOutput {
  std::string path;
  bool at_start = false; // opened by PetscInitialize
  bool hdf5 = false;     // an hdf5 viewer's file
  // For a file named after the one the option gives (F.RANK, F_RANK): F,
  // which must not be a file of the run either (the option meant it).
  std::string stem = "";
};

// The files `option` makes PETSc write on rank `rank` (none for an option
// that writes no file, or writes to standard output).
std::vector<PetscOutput> petsc_outputs(const PetscOption &option, int rank);

// The files mft's share of the command line names (`--config F`,
// `--restart F`, `--from F`, `--output.file F`, `--data.file F`, ...) and
// those named in the --config file's `key = value` lines: every value of a
// key that names files (*.file, *.log), and every value that is an existing
// file. Read before the configuration is parsed, so that PETSc's start-up
// files can be judged; a file the configuration cannot name is left out.
InputFiles files_named_by(const std::vector<std::string> &mft_words);

// InputError `-OPTION = VALUE: why` for the first file an option writes on
// rank `rank` that is one of `files` (or is named after one: -log_trace F
// with F the run file), is no regular file, or has no folder;
// `before_start`: also one that is an existing HDF5 file (but for an hdf5
// viewer's). Returns the files PETSc opens at its start on this rank.
std::vector<std::string> check_petsc_outputs(const std::vector<PetscOption> &options, int rank,
                                             const InputFiles &files, bool before_start);

} // namespace mft
