#include "mft/core/petsc_session.hpp"

#include "mft/core/integrators.hpp"

#include "mft/core/error.hpp"
#include "mft/core/input_file.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
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

// The files an options file includes (its `-options_file F` pairs), in
// order; PETSc's syntax: whitespace-separated words, `#` to the end of a line.
std::vector<std::string> included_options_files(const std::string &path) {
  std::ifstream in(path);
  std::vector<std::string> words, out;
  for (std::string line; std::getline(in, line);) {
    std::istringstream s(line.substr(0, line.find('#')));
    for (std::string w; s >> w;) words.push_back(w);
  }
  for (size_t i = 0; i + 1 < words.size(); ++i)
    if (words[i] == "-options_file") out.push_back(words[i + 1]);
  return out;
}

// InputError when options file `path`, or one it includes, includes a file
// already on the way there (PETSc would recurse until the stack ran out).
void refuse_options_file_cycles(const std::string &path, std::vector<std::string> &chain) {
  require_regular_input("-options_file", path);
  char *real = realpath(path.c_str(), nullptr);
  const std::string canonical = real ? real : path;
  std::free(real);
  if (std::find(chain.begin(), chain.end(), canonical) != chain.end()) {
    std::string way;
    for (const std::string &c : chain) way += c + " -> ";
    throw InputError(key_error("-options_file", path, "includes itself (" + way + canonical + ")"));
  }
  chain.push_back(canonical);
  for (const std::string &next : included_options_files(path)) refuse_options_file_cycles(next, chain);
  chain.pop_back();
}

// The options of the database whose names start with `prefix`, in order.
std::vector<std::pair<std::string, std::string>> options_starting(const std::string &prefix) {
  std::vector<std::pair<std::string, std::string>> out;
  char *all = nullptr;
  if (PetscOptionsGetAll(nullptr, &all) || !all) return out;
  std::vector<std::string> words;
  std::istringstream text(all);
  for (std::string word; text >> word;) words.push_back(word);
  PetscFree(all);
  for (size_t i = 0; i < words.size(); ++i) {
    if (words[i].rfind(prefix, 0) != 0) continue;
    const bool valued = i + 1 < words.size() && (words[i + 1][0] != '-' || is_number(words[i + 1]));
    out.emplace_back(words[i], valued ? words[i + 1] : "");
  }
  return out;
}

// PETSc's refusal of an option of `prefix` as `-OPTION = VALUE: why`: the
// option its message names, or else the one whose value it quotes.
std::string option_error(const std::string &prefix, std::string why) {
  for (const std::string noise : {"PETSc: ", " (in TSSetFromOptions(ts))"})
    if (const auto at = why.find(noise); at != std::string::npos) why.erase(at, noise.size());
  while (!why.empty() && why.back() == ' ') why.pop_back();
  const auto options = options_starting(prefix);
  for (const auto &[name, value] : options)
    if (why.find(name + " ") != std::string::npos || why.find(name + ".") != std::string::npos ||
        (why.size() >= name.size() && why.compare(why.size() - name.size(), name.size(), name) == 0))
      return key_error(name, value, why);
  for (const auto &[name, value] : options)
    if (!value.empty() && (why.find(" " + value + " ") != std::string::npos ||
                           why.find("\"" + value + "\"") != std::string::npos))
      return key_error(name, value, why);
  return key_error(prefix + "*", "", why);
}

} // namespace

SplitArguments split_arguments(int argc, const char *const *argv) {
  SplitArguments out;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "-help") { // what users try first: mft's help, never a run
      out.mft.push_back("--help");
      continue;
    }
    if (arg == "--petsc-help") out.petsc.push_back("-help");
    const bool long_opt = arg.rfind("--", 0) == 0;
    const bool petsc_opt = !long_opt && arg.size() > 1 && arg[0] == '-' && !is_number(arg);
    auto &dest = petsc_opt ? out.petsc : out.mft;
    dest.push_back(arg);
    const bool has_inline_value = long_opt && arg.find('=') != std::string::npos;
    const bool is_flag = arg == "--help" || arg == "--version" || arg == "--keys" || arg == "--petsc-help" ||
                         arg == "--key-reference" || arg == "--format-reference" ||
                         arg == "--dry-run" || arg == "--resume" || arg == "--cgf";
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
  // The files PETSc would read: refused here in mft's words, before PETSc,
  // and by every rank alike (a path may exist on some nodes only).
  try {
    collectively(MPI_COMM_WORLD, [&] {
      for (size_t i = 0; i < petsc_args.size(); ++i) {
        const std::string &arg = petsc_args[i];
        const bool valued = i + 1 < petsc_args.size() && takes_value(petsc_args[i + 1]);
        if (arg == "-options_file") {
          std::vector<std::string> chain;
          refuse_options_file_cycles(valued ? petsc_args[i + 1] : "", chain);
        }
        // A type given without its name: PETSc would take the last one it
        // lists (-depth_ts_rk_type alone ran the tableau 8vr).
        if (!valued && arg.size() > 5 && arg.compare(arg.size() - 5, 5, "_type") == 0)
          throw InputError(key_error(arg, "", "needs a value, the name of a type (mft --petsc-help lists them)"));
      }
    });
  } catch (const Error &e) {
    refused_ = e.what();
    return;
  }
  storage_.push_back(*argc > 0 ? (*argv)[0] : "mft");
  storage_.insert(storage_.end(), petsc_args.begin(), petsc_args.end());
  // mft handles SIGTERM, SIGINT and SIGUSR1 itself (a clean stop); PETSc's
  // handler would abort on them.
  storage_.push_back("-no_signal_handler");
  // PETSc reads ~/.petscrc, ./.petscrc and ./petscrc unasked: a file in the
  // working folder could name an output over the run's own (-log_view :F)
  // or hang the run (a FIFO). mft reads options only where it is told to
  // (the command line, -options_file, PETSC_OPTIONS).
  storage_.push_back("-skip_petscrc");
  for (auto &s : storage_) pointers_.push_back(s.data());
  pointers_.push_back(nullptr);
  int pargc = static_cast<int>(storage_.size());
  char **pargv = pointers_.data();
  // mft's handler before PetscInitialize: an options file PETSc cannot
  // parse is then one of mft's lines, not PETSc's error stack. PETSc finds
  // it on rank 0 alone while the others wait for the options it sends, so
  // that rank ends the job (exit 2, the code of bad input).
  PetscPushErrorHandler(keep_message, nullptr);
  if (PetscInitialize(&pargc, &pargv, nullptr, help)) {
    std::string files;
    for (size_t i = 0; i + 1 < petsc_args.size(); ++i)
      if (petsc_args[i] == "-options_file") files += (files.empty() ? "" : ", ") + petsc_args[i + 1];
    std::string why = g_petsc_message.empty() ? std::string("PETSc could not start") : g_petsc_message;
    for (char &c : why)
      if (c == '\n') c = ' ';
    if (why.size() > 160) why = why.substr(0, 160) + "..."; // it may quote the file: a bounded excerpt
    const std::string line = files.empty() ? key_error("PETSc", "", why)
                                           : key_error("-options_file", files, "PETSc cannot read it: " + why);
    std::fprintf(stderr, "mft: error: %s\n", line.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  petsc_ = true;
}

PetscSession::~PetscSession() {
  // The error handler stays: pushed before PetscInitialize, it was allocated
  // outside PETSc's tracking allocator (-malloc_debug), which must not free it.
  if (petsc_) PetscFinalize();
  MPI_Finalize();
}

void PetscSession::check() const {
  if (!refused_.empty()) throw InputError(refused_);
}

void petsc_forget_message() { g_petsc_message.clear(); }

void petsc_call_with_callbacks(PetscErrorCode ierr, std::exception_ptr &error, const char *call) {
  if (!ierr) return;
  if (error) {
    std::exception_ptr e = error;
    error = nullptr;
    petsc_forget_message();
    std::rethrow_exception(e);
  }
  petsc_check(ierr, call);
}

void refuse_unused_petsc_options(const std::string &command, const std::vector<std::string> &given) {
  // Read by PETSc at its end (or by its own logging), never before.
  static const char *const late[] = {"log_view", "log_all", "log_trace", "log_view_memory", "options_left",
                                     "options_view", "memory_view", "malloc_dump", "malloc_view",
                                     "objects_dump", "help", "no_signal_handler"};
  PetscInt count = 0;
  char **names = nullptr, **values = nullptr;
  MFT_PETSC(PetscOptionsLeftGet(nullptr, &count, &names, &values));
  std::string name, value;
  for (PetscInt i = 0; i < count && name.empty(); ++i) {
    const std::string here = names[i] ? names[i] : "";
    bool allowed = std::find(given.begin(), given.end(), here) == given.end() ||
                   here.find("_view") != std::string::npos || here.rfind("view", 0) == 0;
    for (const char *l : late) allowed = allowed || here == l || here.rfind(std::string(l) + "_", 0) == 0;
    if (!allowed) name = here, value = values[i] ? values[i] : "";
  }
  MFT_PETSC(PetscOptionsLeftRestore(nullptr, &count, &names, &values));
  if (!name.empty())
    throw InputError(key_error("-" + name, value,
                               "nothing in mft " + command + " reads this PETSc option (misspelt? mft " +
                                   command + " --petsc-help lists theirs)"));
}

void print_petsc_help() {
  for (const char *prefix : {"depth_", "train_"}) {
    TS ts = nullptr;
    MFT_PETSC(TSCreate(PETSC_COMM_WORLD, &ts));
    MFT_PETSC(TSSetOptionsPrefix(ts, prefix));
    MFT_PETSC(TSSetType(ts, TSRK));
    MFT_PETSC(TSSetFromOptions(ts));
    MFT_PETSC(TSDestroy(&ts));
  }
}

std::string set_explicit_ts_type(TS ts, const std::string &prefix, const std::string &type) {
  char option[64] = "";
  PetscBool set = PETSC_FALSE;
  MFT_PETSC(PetscOptionsGetString(nullptr, prefix.c_str(), "-ts_type", option, sizeof option, &set));
  if (set && !find_integrator(option))
    throw InputError(key_error("-" + prefix + "ts_type", option,
                               "mft uses an explicit one-step method here: " + comma_list(integrator_names())));
  MFT_PETSC(TSSetType(ts, type.c_str()));
  try {
    MFT_PETSC(TSSetFromOptions(ts));
  } catch (const Error &e) {
    throw InputError(option_error("-" + prefix + "ts_", e.what()));
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
