#pragma once
// The resolved configuration of a run: built-in defaults, then an INI file
// (--config), then `--section.key value` on the command line, in rising
// precedence. Keys are named `section.key` everywhere: in the INI file, on the
// command line, and as the attributes of the output file's /config group.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <variant>
#include <vector>

namespace mft {

struct ModelConfig {
  long long d = 8;             // token dimension
  long long head_dim = 8;      // d_h
  long long heads = 16;        // M, head particles per slice
  long long slices = 8;        // L, depth slices
  long long mlp_width = 0;     // d_f
  long long mlp_particles = 0; // M_f (0: attention only)
  std::string activation = "relu";
};

struct DepthConfig {
  std::string ts_type = "rk"; // PETSc TSType, explicit one-step
  std::string rk_type = "4";  // PETSc TSRKType, when ts_type = rk
  long long steps_per_slice = 1;
};

struct ReadoutConfig {
  std::string kind = "query";  // query | mean
  long long coord = -1;        // c, 0-based; negative counts from the end
  std::vector<double> weights; // w for `mean`; empty: the unit vector e_c
};

struct InitConfig {
  std::uint64_t seed = 1;
  double sigma_qk = 0.5;
  double sigma_v = 1.0;
  double sigma_w1 = 0.5; // MLP W1 entries
  double sigma_w2 = 0.5; // MLP W2 entries
};

struct DataConfig {
  std::string task = "icl-linear"; // icl-linear | gaussian | teacher | file
  long long sequences = 64;        // N
  long long tokens = 16;           // n
  std::uint64_t seed = 2;
  std::string file; // for task = file
  long long teacher_heads = 0; // teacher width; 0: model.heads
};

struct TrainConfig {
  std::string ts_type = "euler"; // PETSc TSType in training time tau
  double dtau = 0.2;
  long long steps = 100;
  double lambda = 0.0; // weight decay
  long long print_every = 10;
  double max_walltime = 0.0; // seconds; stop cleanly before this (0: no limit)
};

struct FamiliesConfig {
  std::string kind = "discrete"; // discrete | cube | laplace | mixture | gaussian-cov
  std::string values;            // a,b,c or lo:hi; empty: the kind's default range
  std::string variances;         // gaussian-cov: v_i, same forms; empty: 1
  double sigma = 0.5;            // mixture component std s
  std::string base = "normal";   // discrete: normal | uniform
  double quadratic = 0.5;        // q in the target <u, mean x> + q mean |x|^2 / d
};

struct CgfConfig {
  long long points = 256; // K sample points z
  double radius = 1.0;    // uniform in the ball of this radius
};

struct NtkConfig {
  std::string part = "V"; // V | QK | mlp | all
  long long every = 0;    // mft train: lambda_min, lambda_max of K_V every this many steps
};

struct OutputConfig {
  std::string file = "mft.h5";
  long long snapshot_every = 10; // particle snapshots every this many steps
  bool overwrite = false;        // replace an existing file (else refuse it)
};

struct RunConfig {
  long long max_memory = 0; // bytes per rank; 0: MemAvailable shared by the node's ranks
};

struct Config {
  ModelConfig model;
  DepthConfig depth;
  ReadoutConfig readout;
  InitConfig init;
  DataConfig data;
  TrainConfig train;
  FamiliesConfig families;
  CgfConfig cgf;
  NtkConfig ntk;
  OutputConfig output;
  RunConfig run;

  // The readout coordinate c in [0, d), negative values counted from the end.
  long long readout_coord() const;
  // The readout vector w (length d): readout.weights, or e_c when empty.
  std::vector<double> readout_weights() const;
};

// One key's resolved value, typed as it is stored in /config.
using ConfigValue = std::variant<long long, double, std::string, std::vector<double>>;

struct ConfigEntry {
  std::string key;
  ConfigValue value;
};

// Every key with its resolved value, in the order of the key table.
std::vector<ConfigEntry> config_entries(const Config &config);

// The options of a command that are not configuration keys.
struct CommandOptions {
  std::string command; // forward | train | ntk: decides which options apply
  bool help = false;
  std::string restart;       // train: --restart FILE
  std::string from;          // ntk: --from FILE
  long long snapshot = -1;   // ntk: --snapshot S (row of /particles; -1: the last)
  bool cgf = false;          // ntk: --cgf
  std::set<std::string> given; // keys set on the command line or in the INI file
  std::string config_file;     // --config FILE
};

// Parses the mft share of the command line (without the subcommand word).
// `--config FILE` names the INI file. Throws InputError of the form
// `KEY = VALUE: why` on any unknown key, key given twice, missing value,
// malformed number or invalid value, or an option the command does not take;
// every value of the INI file is checked, also those the command line
// overrides, and its errors name the file and line. Sets options->help when
// --help was given (and then does not validate).
Config parse_config(const std::vector<std::string> &args, CommandOptions *options = nullptr);

// The configuration stored in a run file's /config (as INI text, key by
// key), over the defaults. InputError naming `source` for a bad value.
Config config_from_text(const std::map<std::string, std::string> &text, const std::string &source);

// Keys a restarted run may change (how long and how it reports, not what it
// computes): train.steps, train.print_every, train.max_walltime,
// output.snapshot_every, output.file, output.overwrite, run.max_memory.
bool restart_may_change(const std::string &key);

// Cross-key checks (called by parse_config; again after data.task = file
// resolved N and n from the file).
void validate(const Config &config);

// The table of keys with their defaults and meaning, for --help.
std::string config_help();

// Renders a value as it would be written in the INI file.
std::string to_string(const ConfigValue &value);

} // namespace mft
