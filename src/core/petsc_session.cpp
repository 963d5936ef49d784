#include "mft/core/petsc_session.hpp"

#include "mft/core/error.hpp"

#include <cstdlib>
#include <mpi.h>

namespace mft {
namespace {

std::string g_petsc_message; // first message of the error being unwound

PetscErrorCode keep_message(MPI_Comm, int, const char *, const char *, PetscErrorCode n,
                            PetscErrorType p, const char *mess, void *) {
  if (p == PETSC_ERROR_INITIAL) g_petsc_message = mess ? mess : "";
  return n;
}

bool is_number(const std::string &s) {
  if (s.empty()) return false;
  char *end = nullptr;
  std::strtod(s.c_str(), &end);
  return end && *end == '\0';
}

bool takes_value(const std::string &next) {
  return next.empty() || next[0] != '-' || is_number(next);
}

} // namespace

SplitArguments split_arguments(int argc, const char *const *argv) {
  SplitArguments out;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool long_opt = arg.rfind("--", 0) == 0;
    const bool petsc_opt = !long_opt && arg.size() > 1 && arg[0] == '-' && !is_number(arg);
    auto &dest = petsc_opt ? out.petsc : out.mft;
    dest.push_back(arg);
    const bool has_inline_value = long_opt && arg.find('=') != std::string::npos;
    const bool is_flag = arg == "--help" || arg == "--version";
    if ((long_opt || petsc_opt) && !has_inline_value && !is_flag && i + 1 < argc &&
        takes_value(argv[i + 1]))
      dest.push_back(argv[++i]);
  }
  return out;
}

PetscSession::PetscSession(int *argc, char ***argv, const std::vector<std::string> &petsc_args,
                           const char *help) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) MPI_Init(argc, argv);
  storage_.push_back(*argc > 0 ? (*argv)[0] : "mft");
  storage_.insert(storage_.end(), petsc_args.begin(), petsc_args.end());
  // mft handles SIGTERM, SIGINT and SIGUSR1 itself (a clean stop); PETSc's
  // handler would abort on them.
  storage_.push_back("-no_signal_handler");
  for (auto &s : storage_) pointers_.push_back(s.data());
  pointers_.push_back(nullptr);
  int pargc = static_cast<int>(storage_.size());
  char **pargv = pointers_.data();
  PetscErrorCode ierr = PetscInitialize(&pargc, &pargv, nullptr, help);
  if (ierr) {
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  PetscPushErrorHandler(keep_message, nullptr);
}

PetscSession::~PetscSession() {
  PetscPopErrorHandler();
  PetscFinalize();
  MPI_Finalize();
}

void petsc_forget_message() { g_petsc_message.clear(); }

std::string set_explicit_ts_type(TS ts, const std::string &prefix, const std::string &type) {
  auto is_explicit = [](const std::string &t) { return t == TSEULER || t == TSRK || t == TSSSP; };
  char option[64] = "";
  PetscBool set = PETSC_FALSE;
  MFT_PETSC(PetscOptionsGetString(nullptr, prefix.c_str(), "-ts_type", option, sizeof option, &set));
  if (set && !is_explicit(option))
    throw InputError(key_error("-" + prefix + "ts_type", option,
                               "mft uses an explicit one-step method here: euler, rk or ssp"));
  MFT_PETSC(TSSetType(ts, type.c_str()));
  try {
    MFT_PETSC(TSSetFromOptions(ts));
  } catch (const Error &e) {
    throw InputError("-" + prefix + "ts options: " + e.what());
  }
  TSType chosen;
  MFT_PETSC(TSGetType(ts, &chosen));
  return chosen;
}

void petsc_check(PetscErrorCode ierr, const char *call) {
  if (!ierr) return;
  std::string message = g_petsc_message;
  g_petsc_message.clear();
  if (message.empty()) {
    const char *text = nullptr;
    PetscErrorMessage(ierr, &text, nullptr);
    message = text ? text : "unknown PETSc error";
  }
  for (auto &c : message)
    if (c == '\n') c = ' ';
  throw Error(std::string("PETSc: ") + message + " (in " + call + ")");
}

} // namespace mft
