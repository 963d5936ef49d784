#include "mft/runs/from_run.hpp"

#include "mft/core/error.hpp"
#include "mft/runs/restart_config.hpp"

#include <cstdio>
#include <map>

namespace mft {
namespace {

bool in_section(const std::string &key, std::initializer_list<const char *> sections) {
  for (const char *s : sections)
    if (key.rfind(s, 0) == 0) return true;
  return false;
}

} // namespace

bool model_key(const std::string &key) {
  return in_section(key, {"model.", "readout.", "loss.", "data.", "families."});
}

Config from_run_configuration(MPI_Comm comm, const Config &given_config, const CommandOptions &options,
                              FromRun &from) {
  Config config;
  collectively(comm, [&] {
    from.path = options.from;
    from.point = inspect_run_file(from.path, "--from", false);
    const RunFileSummary &point = from.point;
    from.row = options.snapshot < 0 ? point.snapshots + options.snapshot : options.snapshot;
    if (from.row < 0 || from.row >= point.snapshots)
      throw InputError(key_error("--snapshot", std::to_string(options.snapshot),
                                 from.path + " has " + std::to_string(point.snapshots) + " complete snapshots"));
    from.step = point.steps[static_cast<size_t>(from.row)];
    from.tau = point.taus[static_cast<size_t>(from.row)];

    const Config stored = config_from_text(point.config, "--from " + from.path);
    std::map<std::string, std::string> theirs;
    for (const ConfigEntry &e : config_entries(stored)) theirs[e.key] = to_string(e.value);
    config = given_config;
    for (const ConfigEntry &e : config_entries(given_config)) {
      const bool given = options.given.count(e.key) > 0;
      const std::string here = to_string(e.value);
      if (model_key(e.key)) {
        if (given && here != theirs[e.key])
          throw InputError(key_error(e.key, shown(here),
                                     "--from " + from.path + " holds a model with " + e.key + " = " +
                                         shown(theirs[e.key]) + "; --from takes the model's and data's keys "
                                         "from the file (init.file puts its particles into a model of your own)"));
        set_config_key(config, e.key, theirs[e.key]);
      } else if (e.key.rfind("depth.", 0) == 0 && !restart_may_change(e.key)) {
        // The scheme is the file's; its checkpoints were its machine's.
        if (!given) set_config_key(config, e.key, theirs[e.key]);
      } else if (e.key.rfind("init.", 0) == 0 && given) {
        throw InputError(key_error(e.key, shown(here),
                                   "--from " + from.path + " gives the particles (its snapshot of step " +
                                       std::to_string(from.step) + "); init.* keys do not apply"));
      }
    }
    // The record of where the particles came from, as /config keeps it.
    config.init = stored.init;
    config.init.file = from.path;
    config.init.snapshot = from.row;
  });
  return config;
}

void read_from_run_particles(MPI_Comm comm, const FromRun &from, Particles &particles) {
  collectively(comm, [&] { // a rank's share alone may be non-finite
    read_run_snapshot(from.path, "--from", from.row, particles);
    require_sound_snapshot(particles, {}, from.step, "--from", from.path, snapshot_of_step(from.step));
  });
}

Config resolve_command_config(MPI_Comm comm, const Config &given_config, const CommandOptions &options,
                              const RunInfo &info, Job job, bool write, FromRun &from) {
  Config merged = options.from.empty() ? given_config : from_run_configuration(comm, given_config, options, from);
  // Online data were how the file's run trained (with its method, which
  // --from does not take); forward and ntk measure the file's sequences.
  if (from && job != Job::Train) merged.data.online = false;
  const StoredData source = from.stored();
  const Config config = resolve_config(comm, merged, job, from ? &source : nullptr);
  collectively(comm, [&] {
    check_petsc_outputs_of_run(config, info, {{"--from", options.from}});
    if (write) check_new_run_file(comm, config, info, {{"--from", options.from}});
  });
  return config;
}

void adopt_from_run_particles(MPI_Comm comm, const FromRun &from, Problem &problem) {
  if (!from) return;
  read_from_run_particles(comm, from, *problem.particles);
  problem.particles_changed();
}

std::string init_file_differences(const Config &config, const std::string &command) {
  if (config.init.file.empty()) return "";
  RunFileSummary point;
  try {
    point = inspect_run_file(config.init.file, "init.file", false);
  } catch (const Error &) {
    return ""; // particles without a run's /config (or checked elsewhere)
  }
  std::string out;
  for (const ConfigEntry &e : config_entries(config)) {
    if (!in_section(e.key, {"model.", "readout.", "loss.", "depth."}) || restart_may_change(e.key)) continue;
    const auto it = point.config.find(e.key);
    const std::string here = to_string(e.value);
    if (it == point.config.end() || it->second == here) continue;
    out += (out.empty() ? "" : ", ") + e.key + " (file " + shown(it->second) + ", here " + shown(here) + ")";
  }
  if (out.empty()) return "";
  return "init.file = " + config.init.file + ": its model differs from this run's in " + out +
         " (mft " + command + " --from " + config.init.file + " runs the file's model)";
}

std::string particle_source(const Config &config, const FromRun &from) {
  char line[400];
  if (from) {
    std::snprintf(line, sizeof line, "particles: %s, the snapshot of step %lld (tau %g)", from.path.c_str(), from.step,
                  from.tau);
    return line;
  }
  if (!config.init.file.empty())
    return "particles: init.file " + config.init.file + ", row " + std::to_string(config.init.snapshot) +
           " of its /particles";
  std::snprintf(line, sizeof line, "particles: drawn, init.seed = %llu, init.sigma_qk = %g, init.sigma_v = %g",
                static_cast<unsigned long long>(config.init.seed), config.init.sigma_qk, config.init.sigma_v);
  std::string out = line;
  if (config.model.mlp_particles > 0) {
    std::snprintf(line, sizeof line, ", init.sigma_w1 = %g, init.sigma_w2 = %g", config.init.sigma_w1,
                  config.init.sigma_w2);
    out += line;
  }
  return out;
}

} // namespace mft
