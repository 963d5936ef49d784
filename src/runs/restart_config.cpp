// A restart takes its configuration from the file it continues.
#include "mft/runs/restart_config.hpp"

#include "mft/core/blas_info.hpp"
#include "mft/core/error.hpp"
#include "mft/core/input_file.hpp"
#include "mft/core/version.hpp"
#include "mft/model/particles.hpp"

#include <map>
#include <sys/stat.h>

namespace mft {
namespace {

// The file's value of `key` as INI text: its /config entry, or the default
// for a key added to the format after the file was written.
std::string file_value(const RunFileSummary &point, const std::string &key, const std::string &path,
                       const std::string &option) {
  const auto it = point.config.find(key);
  if (it != point.config.end()) return it->second;
  if (key_added_to_format(key)) return default_text(key);
  throw InputError(key_error(option, path, "its /config has no key " + key));
}

std::string may_change_list() { return comma_list(keys_a_restart_may_change()); }

// `key` = `text` as the file's run would have resolved it: `auto` (an
// initial scale) becomes the value the file's sizes give, as the run file
// records it. Text that does not parse is left to the comparison.
std::string resolved_text(Config config, const std::string &key, const std::string &text) {
  try {
    set_config_key(config, key, text);
    resolve_readout_outputs(config);
    resolve_initial_scales(config);
    return config_value(config, key);
  } catch (const Error &) {
    return text;
  }
}

} // namespace

std::string shown(const std::string &text) { return text.empty() ? "''" : text; }

Config restart_configuration(MPI_Comm comm, const Config &given_config, const std::set<std::string> &given,
                             const std::string &restart, const std::string &option) {
  Config config;
  collectively(comm, [&] {
    const RunFileSummary point = inspect_run_file(restart, option, true);
    config = config_from_text(point.config, option + " " + restart);
    std::map<std::string, std::string> wanted;
    for (const ConfigEntry &e : config_entries(given_config))
      if (given.count(e.key)) wanted[e.key] = to_string(e.value);
    // The process grid and the memory limit describe the machine the restart
    // runs on, not the run: the defaults, unless given.
    for (const std::string &key : keys_a_restart_may_change())
      if ((key.rfind("parallel.", 0) == 0 || key.rfind("run.", 0) == 0) && !given.count(key))
        set_config_key(config, key, default_text(key));
    for (const auto &[key, text] : wanted) {
      if (restart_may_change(key)) {
        set_config_key(config, key, text);
        continue;
      }
      const std::string theirs = file_value(point, key, restart, option);
      if (text != theirs && resolved_text(config, key, text) != resolved_text(config, key, theirs))
        throw InputError(key_error(key, shown(text),
                                   option + " " + restart + " continues the file's run, which has " + key +
                                       " = " + shown(theirs) + "; a restart takes its keys from the file and "
                                       "may change only " + may_change_list() +
                                       " (start a new run to change " + key + ")"));
    }
    // A received file must not choose where its restart writes: unless
    // given, the log keeps its name but lies beside the run file written.
    if (!given.count("output.log") && !config.output.log.empty()) {
      const std::string folder = folder_of(given.count("output.file") ? config.output.file : restart);
      config.output.log = (folder == "." ? "" : folder + "/") + base_name(config.output.log);
    }
  });
  return config;
}

std::string resume_target(MPI_Comm comm, const Config &config) {
  int exists = 0;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) {
    struct stat st {};
    exists = stat(config.output.file.c_str(), &st) == 0 ? 1 : 0;
  }
  MPI_Bcast(&exists, 1, MPI_INT, 0, comm);
  return exists ? config.output.file : std::string();
}

void check_restart_config(const Config &config, const RunFileSummary &point, const std::string &path,
                          const std::string &option) {
  for (const ConfigEntry &e : config_entries(config)) {
    if (restart_may_change(e.key)) continue;
    const auto it = point.config.find(e.key);
    const std::string here = to_string(e.value);
    if (it == point.config.end() && key_added_to_format(e.key) && here == default_text(e.key))
      continue; // a file from before the key: it computed with the default
    if (it == point.config.end())
      throw InputError(key_error(option, path, "its /config has no key " + e.key));
    if (it->second != here)
      throw InputError(key_error(option, path,
                                 e.key + " = " + shown(here) + " differs from the file's " + shown(it->second)));
  }
}

std::string build_difference(const std::string &path, const RunFileSummary &point) {
  // The file's words reach the terminal: escaped, and at most a line long.
  const auto said = [](const std::string &text) {
    return printable(text.size() > 200 ? text.substr(0, 200) + "..." : text);
  };
  std::string differs;
  if (!point.compiled_for.empty() && point.compiled_for != kCompiledFor)
    differs = "compiled for " + said(point.compiled_for) + " (this one: " + kCompiledFor + ")";
  if (const std::string blas = blas_provenance(); !point.blas.empty() && point.blas != blas)
    differs += (differs.empty() ? "" : ", ") + ("running " + said(point.blas) + " (this one: " + blas + ")");
  if (differs.empty()) return "";
  return "note: " + path + " was begun by an mft " + differs +
         ": the continued steps round as this build does, so they need not equal an uninterrupted run bit for bit";
}

} // namespace mft
