#pragma once
// Errors that mft reports to its user: one line, a non-zero exit, no hang.
//
// Every rank runs the same set-up on the same input, so bad input is found on
// all ranks at once; `collectively` makes that an agreement, so a failure seen
// by one rank alone still stops all of them cleanly.
#include <mpi.h>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace mft {

// A failure of the run (a diverged solve, an I/O error). Exit code 1.
class Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
  virtual int exit_code() const { return 1; }
};

// The run diverged: a token, the risk or a gradient became non-finite. Its
// own exit code, so that scripts tell a diverged run (a result: this step
// is too large for this model) from other failures without reading text.
constexpr int kExitDiverged = 4;
class DivergedError : public Error {
public:
  using Error::Error;
  int exit_code() const override { return kExitDiverged; }
};

// Bad input from the user: a configuration key, a command-line option or an
// input file. The message names the key or file and the offending value.
// Exit code 2.
class InputError : public Error {
public:
  using Error::Error;
  int exit_code() const override { return 2; }
};

// Runs f on every rank of comm; if it throws on any rank, every rank throws an
// error carrying the message of the lowest failing rank (and its kind:
// Error, DivergedError or InputError).
void collectively(MPI_Comm comm, const std::function<void()> &f);

// Ends the whole job at once from this rank: prints `mft: error: MESSAGE`
// on its stderr and calls MPI_Abort (exit code 1). For a failure that the
// other ranks cannot learn of by agreement: one rank's I/O error inside a
// collective HDF5 call, where the others wait inside that call (mpirun adds
// its own MPI_ABORT notice unless run with -q).
[[noreturn]] void abort_job(const std::string &message);

// Formats "key = value: why", the shape of every input error message; key
// and value pass through printable(), an empty value reads ''.
std::string key_error(const std::string &key, const std::string &value, const std::string &why);

// "a, b, c": the names a message lists.
std::string comma_list(const std::vector<std::string> &names);

// `text` with control bytes and bytes that are not UTF-8 written as \xNN, so
// that user input never reaches a terminal raw.
std::string printable(const std::string &text);

} // namespace mft
