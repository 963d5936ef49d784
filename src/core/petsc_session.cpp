#include "mft/core/petsc_session.hpp"

#include "mft/core/integrators.hpp"

#include "mft/core/error.hpp"
#include "mft/core/input_file.hpp"

#include <algorithm>
#include <cstdio>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <mpi.h>
#include <unistd.h>

namespace mft {
namespace {

std::string g_petsc_message; // first message of the error being unwound

PetscErrorCode keep_message(MPI_Comm, int, const char *, const char *, PetscErrorCode n,
                            PetscErrorType p, const char *mess, void *) {
  if (p == PETSC_ERROR_INITIAL) g_petsc_message = mess ? mess : "";
  return n;
}

// -fp_trap's report, made before the trap can fire: PETSc's own handler
// prints an error stack and aborts with its code 72; mft's writes one line
// (async-signal-safe: write alone) and ends the job as a diverged run.
char g_trap_rank[24] = "0";
int g_trap_ranks = 1;

extern "C" void report_fp_trap(int, siginfo_t *info, void *) {
  const char *what = "a floating-point exception";
  switch (info ? info->si_code : 0) {
  case FPE_FLTOVF: what = "a floating-point overflow"; break;
  case FPE_FLTINV: what = "an invalid floating-point operation (a NaN)"; break;
  case FPE_FLTDIV:
  case FPE_INTDIV: what = "a division by zero"; break;
  case FPE_FLTUND: what = "a floating-point underflow"; break;
  }
  const char *parts[] = {"mft: error: -fp_trap = '': ", what, " trapped on rank ", g_trap_rank,
                         "; the run stops here (a run file keeps its last complete snapshot)\n"};
  char line[512]; // one write: the lines of ranks trapping at once stay whole (a pipe's write is atomic)
  size_t n = 0;
  for (const char *part : parts)
    for (size_t i = 0; part[i] && n < sizeof line; ++i) line[n++] = part[i];
  if (write(STDERR_FILENO, line, n) < 0) n = 0;
  if (g_trap_ranks > 1) MPI_Abort(MPI_COMM_WORLD, kExitDiverged); // the other ranks may wait in a collective
  _exit(kExitDiverged);
}

void report_fp_traps_in_one_line() {
  PetscBool trap = PETSC_FALSE;
  PetscOptionsGetBool(nullptr, nullptr, "-fp_trap", &trap, nullptr);
  if (!trap) return;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_trap_ranks);
  std::snprintf(g_trap_rank, sizeof g_trap_rank, "%d", rank);
  struct sigaction action {};
  action.sa_sigaction = report_fp_trap;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_SIGINFO;
  sigaction(SIGFPE, &action, nullptr);
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

// The options of whitespace-separated words, PETSc's syntax: a word after
// an option is its value unless it is an option itself (a negative number
// is a value).
std::vector<PetscOption> options_in(const std::vector<std::string> &words) {
  std::vector<PetscOption> out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (words[i].size() < 2 || words[i][0] != '-' || is_number(words[i])) continue;
    const bool valued = i + 1 < words.size() && takes_value(words[i + 1]);
    out.emplace_back(words[i].substr(1), valued ? words[i + 1] : "");
    i += valued;
  }
  return out;
}

// The options of `words`, each -options_file read in place; `chain` the
// files on the way here, to refuse a cycle (PETSc would recurse until the
// stack ran out).
void add_options(const std::vector<std::string> &words, std::vector<PetscOption> &out,
                 std::vector<std::string> &files, std::vector<std::string> &chain);

void add_options_file(const std::string &path, std::vector<PetscOption> &out, std::vector<std::string> &files,
                      std::vector<std::string> &chain) {
  require_regular_input("-options_file", path);
  char *real = realpath(path.c_str(), nullptr);
  const std::string canonical = real ? real : path;
  std::free(real);
  if (std::find(chain.begin(), chain.end(), canonical) != chain.end()) {
    std::string way;
    for (const std::string &c : chain) way += c + " -> ";
    throw InputError(key_error("-options_file", path, "includes itself (" + way + canonical + ")"));
  }
  files.push_back(path);
  std::ifstream in(path);
  std::vector<std::string> words;
  for (std::string line; std::getline(in, line);) { // `#` to the end of a line is a comment
    std::istringstream s(line.substr(0, line.find('#')));
    for (std::string w; s >> w;) words.push_back(w);
  }
  chain.push_back(canonical);
  add_options(words, out, files, chain);
  chain.pop_back();
}

void add_options(const std::vector<std::string> &words, std::vector<PetscOption> &out,
                 std::vector<std::string> &files, std::vector<std::string> &chain) {
  for (const auto &[name, value] : options_in(words))
    if (name == "options_file")
      add_options_file(value, out, files, chain);
    else
      out.emplace_back(name, value);
}

// The options of the database whose names start with `prefix`, in order.
std::vector<PetscOption> options_starting(const std::string &prefix) {
  std::vector<PetscOption> out;
  for (auto &[name, value] : petsc_options_in_database())
    if (("-" + name).rfind(prefix, 0) == 0) out.emplace_back("-" + name, value);
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

std::vector<PetscOption> petsc_options_of(const std::vector<std::string> &words,
                                          std::vector<std::string> *options_files) {
  std::vector<PetscOption> out;
  std::vector<std::string> files, chain;
  std::vector<std::string> all;
  if (const char *env = std::getenv("PETSC_OPTIONS")) {
    std::istringstream text(env);
    for (std::string w; text >> w;) all.push_back(w);
  }
  all.insert(all.end(), words.begin(), words.end());
  add_options(all, out, files, chain);
  if (options_files) *options_files = files;
  return out;
}

std::vector<PetscOption> petsc_options_in_database() {
  char *all = nullptr;
  if (PetscOptionsGetAll(nullptr, &all) || !all) return {};
  std::vector<std::string> words;
  std::istringstream text(all);
  for (std::string word; text >> word;) words.push_back(word);
  PetscFree(all);
  return options_in(words);
}

PetscSession::PetscSession(int *argc, char ***argv, const std::vector<std::string> &petsc_args,
                           const OutputCheck &check_outputs, const char *help) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) MPI_Init(argc, argv);
  // The files PETSc would read, and those it would write at its start:
  // refused here in mft's words, before PETSc, and by every rank alike (a
  // path may exist on some nodes only).
  std::vector<PetscOption> start_options;
  std::vector<std::string> start_files;
  try {
    collectively(MPI_COMM_WORLD, [&] {
      start_options = petsc_options_of(petsc_args, &start_files);
      for (const auto &[name, value] : start_options)
        // A type given without its name: PETSc would take the last one it
        // lists (-depth_ts_rk_type alone ran the tableau 8vr).
        if (value.empty() && name.size() > 5 && name.compare(name.size() - 5, 5, "_type") == 0)
          throw InputError(key_error("-" + name, "", "needs a value, the name of a type (mft --petsc-help lists them)"));
      if (check_outputs)
        for (const std::string &path : check_outputs(start_options, start_files))
          if (access(path.c_str(), F_OK) != 0) created_at_start_.push_back(path);
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
  // mft's handler before PetscInitialize: an option or an options file
  // PETSc cannot take is then one of mft's lines, not PETSc's error stack.
  // PETSc finds a bad options file on rank 0 alone while the others wait for
  // the options it sends, so on several ranks that rank ends the job (exit
  // 2, the code of bad input); one rank alone ends as a refused run does.
  PetscPushErrorHandler(keep_message, nullptr);
  if (PetscInitialize(&pargc, &pargv, nullptr, help)) {
    std::string why = g_petsc_message.empty() ? std::string("PETSc could not start") : g_petsc_message;
    g_petsc_message.clear();
    for (char &c : why)
      if (c == '\n') c = ' ';
    if (why.size() > 160) why = why.substr(0, 160) + "..."; // it may quote the file: a bounded excerpt
    std::string line;
    for (const auto &[name, value] : start_options)
      if (line.empty() && !value.empty() && why.size() >= value.size() &&
          why.compare(why.size() - value.size(), value.size(), value) == 0)
        line = key_error("-" + name, value, why); // "Unknown logical value: VALUE"
    if (line.empty() && !start_files.empty())
      line = key_error("-options_file", comma_list(start_files), "PETSc cannot read it: " + why);
    if (line.empty()) line = key_error("PETSc", "", why);
    int ranks = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (ranks == 1) {
      refused_ = line;
      return;
    }
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    // The ranks read the same options (an options file: rank 0 reads it),
    // so rank 0 reports and ends the job; another rank waits for that
    // rather than end the job first, and reports itself only if rank 0 does
    // not (it started).
    for (const double until = MPI_Wtime() + 10; rank != 0 && MPI_Wtime() < until;) sleep(1); // a signal may cut one short
    std::fprintf(stderr, "mft: error: %s\n", line.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  petsc_ = true;
  report_fp_traps_in_one_line();
}

PetscSession::~PetscSession() {
  // The error handler stays: pushed before PetscInitialize, it was allocated
  // outside PETSc's tracking allocator (-malloc_debug), which must not free it.
  if (petsc_) PetscFinalize();
  MPI_Finalize();
}

void PetscSession::discard_outputs() {
  if (!petsc_) return;
  // Written by PetscFinalize: a refused run leaves no log of itself.
  for (const char *name : {"-log_view", "-log_all", "-log_view_memory", "-malloc_view", "-malloc_dump",
                           "-memory_view", "-options_view", "-objects_dump"})
    PetscOptionsClearValue(nullptr, name);
  // Opened by PetscInitialize (-history, -log_trace, -info): a file this
  // start created goes (the descriptors PETSc holds write nowhere after).
  for (const std::string &path : created_at_start_) unlink(path.c_str());
  created_at_start_.clear();
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
