#pragma once
// The configuration of a run: built-in defaults, then an INI file
// (--config), then `--section.key value` on the command line, in rising
// precedence (parse_config), resolved once for the run (resolve_config,
// runs/build_problem.hpp). Keys are named `section.key` everywhere: in the INI file, on the
// command line, and as the attributes of the output file's /config group.
#include "mft/core/registry.hpp"

#include <boost/program_options/options_description.hpp>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <variant>
#include <vector>

namespace mft {

// The keys the registries' entries own (their MFT_KEY lines,
// cmake/registries.cmake) are members of their section's struct.
#pragma push_macro("MFT_ENTRY_KEY")
#undef MFT_ENTRY_KEY
#define MFT_ENTRY_KEY(entry, key, type, value, check, help) type key = value;

struct ModelConfig {
  long long d = 8;             // token dimension
  long long head_dim = 8;      // d_h
  long long heads = 16;        // M, head particles per slice
  long long slices = 8;        // L, depth slices
  long long mlp_width = 0;     // d_f
  long long mlp_particles = 0; // M_f (0: attention only)
  std::string activation = "relu";
  std::string attention = "softmax"; // a registered score map (model/score_maps/)
  bool causal = false;               // token i attends to tokens 1..i only
  std::string norm = "none";         // a registered token norm (model/norms/)
  // Symbol tasks (MODEL.md §13): the positional code of the embedding,
  // sinusoidal or one-hot, in p coordinates after the k symbol coordinates.
  std::string positions = "sinusoidal";
  long long position_dim = 16;
  // The keys the score maps and token norms own (their MFT_KEY lines).
#include "mft/registry/score_maps_keys.inc"
#include "mft/registry/norms_keys.inc"
};

struct DepthConfig {
  std::string ts_type = "rk"; // PETSc TSType, explicit one-step
  std::string rk_type = "4";  // PETSc TSRKType, when ts_type = rk
  long long steps_per_slice = 1;
  // The adjoint's forward trajectory: kDepthCheckpointsAuto (every step kept
  // when it fits the memory limit, else the checkpoints that fit with the
  // least recomputation), 0 (every step kept), or c >= 1 (the state kept at every c-th
  // slice boundary, and c slices of steps recomputed at a time).
  long long checkpoint_slices = -1;
};
inline constexpr long long kDepthCheckpointsAuto = -1;

struct ReadoutConfig {
  std::string kind = "query";  // a registered readout (model/readouts/)
  long long dim = 1;           // d_out
  long long coord = -1;        // c, 0-based; negative: the block ends that far from the end
  std::vector<double> weights; // W (d_out x d) of a weighted readout; empty: rows e_c .. e_{c+d_out-1}
#include "mft/registry/readouts_keys.inc"
};

struct LossConfig {
  std::string kind = "squared"; // a registered loss (model/losses/)
#include "mft/registry/losses_keys.inc"
};

// An initial scale left to the model's sizes ("auto" in the configuration).
inline constexpr double kScaledWithSizes = -1.0;

struct InitConfig {
  std::uint64_t seed = 1;
  // The entries' standard deviations; kScaledWithSizes (the default): the
  // species' scales for the model's sizes (MODEL.md §9), resolved with them.
  double sigma_qk = kScaledWithSizes;
  double sigma_v = kScaledWithSizes;
  double sigma_w1 = kScaledWithSizes; // the neurons' first matrix
  double sigma_w2 = kScaledWithSizes; // the neurons' second matrix
  std::string file;       // the particles of a snapshot of this file instead of drawn ones ("": drawn)
  long long snapshot = -1; // its row of /particles; negative: from the end (stored resolved)
};

struct DataConfig {
  std::string task = "icl-linear"; // a registered data task (tasks/data_tasks/)
  long long sequences = 64;        // N
  long long tokens = 16;           // n
  long long test_sequences = 0;    // held-out sequences (task file: the file's)
  std::uint64_t seed = 2;
  std::uint64_t test_seed = 3; // the held-out sequences' own streams
  bool online = false;         // a fresh minibatch of train.batch sequences every step
  std::string file; // for task = file
  long long teacher_heads = 0; // teacher width; 0: model.heads
  long long vocab = 3;         // symbol tasks: the vocabulary k (text: the file's characters, resolved)
  long long probe_sequences = 16; // symbol tasks: the induction probe's sequences (0: none)
#include "mft/registry/data_tasks_keys.inc"
};

struct TrainConfig {
  std::string ts_type = "euler"; // PETSc TSType in training time tau
  double dtau = 0.2;
  long long steps = 100;
  double lambda = 0.0; // weight decay
  long long print_every = 10;
  double max_walltime = 0.0; // seconds; stop cleanly before this (0: no limit)
  // Optimiser (MODEL.md §10): a registered train.method, the minibatch size
  // b (0: all N sequences), the Langevin temperature T, and the keys the
  // optimisers own (their MFT_KEY lines).
  std::string method = "flow";
  long long batch = 0;
  double temperature = 0.0;
#include "mft/registry/optimizers_keys.inc"
};

#pragma pop_macro("MFT_ENTRY_KEY")

struct FamiliesConfig {
  std::string kind = "discrete"; // discrete | cube | laplace | mixture | gaussian-cov
  std::string values;            // a,b,c or lo:hi; empty: the kind's default range
  std::string variances;         // gaussian-cov: v_i, same forms; empty: 1
  double sigma = 0.5;            // mixture component std s
  std::string base = "normal";   // discrete: normal | uniform
  double quadratic = 0.5;        // q in the target <u, mean x> + q mean |x|^2 / d
};

struct CgfConfig {
  long long points = 0; // K sample points z; 0: max(256, N + d + 1), set when resolved
  double radius = 1.0;    // uniform in the ball of this radius
};

struct ForwardConfig {
  bool tokens_depth = false; // mft forward: the tokens at every slice boundary into /forward/tokens_depth
  bool every_step = false;   // ... at every integrator step instead
};

struct NtkConfig {
  std::string part = "V"; // V | QK | mlp | all
  long long every = 0;    // mft train: lambda_min, lambda_max of K_V every this many steps
};

struct OutputConfig {
  std::string file = "mft.h5";
  long long snapshot_every = 10; // particle snapshots every this many steps
  long long history_every = 1;   // a /history row every this many steps (and first, last, stop)
  bool overwrite = false;        // replace an existing file (else refuse it)
  std::string log;               // mft train's progress as JSON lines ("": none)
  bool token_spread = false;     // /history/token_spread: the tokens' spread through depth
  bool attention = false;        // mft forward: /forward/attention, each slice's head-averaged attention
};

// mft forward: slices whose velocity is set to zero (Olsson et al.'s
// ablation), comma-separated indices ("": none).
struct AblateConfig {
  std::string slices;
};

struct ParallelConfig {
  // P_s: ranks = P_h x P_s; each of the P_s groups holds a block of the
  // sequences and splits the heads over its P_h ranks.
  long long sequence_groups = 1;
};

struct RunConfig {
  long long max_memory = 0; // bytes per rank; 0: MemAvailable shared by the node's ranks
  std::string precision = "double"; // the kernels': double, or mixed (float products, double sums)
};

struct Config {
  ModelConfig model;
  DepthConfig depth;
  ReadoutConfig readout;
  LossConfig loss;
  InitConfig init;
  DataConfig data;
  TrainConfig train;
  FamiliesConfig families;
  CgfConfig cgf;
  ForwardConfig forward;
  NtkConfig ntk;
  OutputConfig output;
  ParallelConfig parallel;
  RunConfig run;
  AblateConfig ablate;

  // The first readout coordinate c in [0, d - d_out]; a negative value puts
  // the block's end that far from the end (-1: the last d_out coordinates).
  long long readout_coord() const;
  // The readout matrix W (d_out x d, row-major): readout.weights, or the rows
  // e_c .. e_{c+d_out-1} when empty.
  std::vector<double> readout_weights() const;
  // ablate.slices as indices (InputError naming the key for a bad list).
  std::vector<long long> ablated_slices() const;
};

// One key's resolved value, typed as it is stored in /config.
using ConfigValue = std::variant<long long, double, std::string, std::vector<double>>;

struct ConfigEntry {
  std::string key;
  ConfigValue value;
};

// Every key with its resolved value, in the order of the key table.
std::vector<ConfigEntry> config_entries(const Config &config);

// The configuration stored in a run file's /config (as INI text, key by
// key), over the defaults. InputError naming `source` for a bad value.
Config config_from_text(const std::map<std::string, std::string> &text, const std::string &source);

// Keys a restarted run may change (how long and how it reports, not what it
// computes), as the key table marks them: train.steps, output.file, ...
bool restart_may_change(const std::string &key);
// Those keys, in the order of the key table.
std::vector<std::string> keys_a_restart_may_change();

namespace detail {
// An integer, or InputError `key = text: not an integer`.
long long parse_integer(const std::string &key, const std::string &text);
// Comma-separated non-negative integers ("" for none), or InputError naming the key.
std::vector<long long> parse_index_list(const std::string &key, const std::string &text);
} // namespace detail

// Whether `name` is a configuration key.
bool is_config_key(const std::string &name);

// The key a misspelt `name` most likely means (a few edits away, or a key
// named without its section), or "" when none is close; did_you_mean
// writes it as "; did you mean KEY?" ("" for none).
std::string closest_key(const std::string &name);
std::string did_you_mean(const std::string &name);

// Sets one key from its INI text: InputError `KEY = VALUE: why` for an
// unknown key or a bad value.
void set_config_key(Config &config, const std::string &key, const std::string &text);

// The INI file's values, each checked on its own (an unknown key, a second
// occurrence or a bad value is an error even when the command line sets the
// same key), with the file and line in every message; `command` names the
// program in the hint to --help.
std::map<std::string, std::string> read_config_file(const std::string &path, const std::string &command);

// Every key as a Boost.Program_options option with its default and help.
boost::program_options::options_description config_key_options();

// Keys added to the mft/1 format after its first files: a run file without
// one was computed with the key's default.
bool key_added_to_format(const std::string &key);
// A key's default as INI text.
std::string default_text(const std::string &key);
// The value of `key` in `config`, as INI text ("" for a name that is not a key).
std::string config_value(const Config &config, const std::string &key);
// The values a key accepts when they are a fixed set (a registry's names:
// model.attention, train.method, ...); empty for a key that takes any value
// of its type, and for a name that is not a key.
std::vector<std::string> key_choices(const std::string &key);

// The values of another key under which `key` is read: an entry's own key
// is read only when that entry is selected (train.beta1: train.method =
// adam). An empty selector: the key is read whatever the others say.
struct KeyReaders {
  std::string selector;
  std::vector<std::string> values;
};
KeyReaders key_readers(const std::string &key);

// Cross-key checks, in two parts: validate_keys those that hold whatever
// the data's sizes, validate_sizes those that need d and N (readout
// coordinates and weights, the minibatch size, the sequence groups), which a
// data file or a run file may decide. A run's configuration is checked once,
// when it is resolved (resolve_config, runs/build_problem.hpp): the first part
// before the sizes are read, the second after.
void validate_keys(const Config &config);
// A readout whose outputs follow from the data (next-token: (n - 1) k logits
// a sequence) sets readout.dim; the task of symbols and that readout go
// together. InputError naming the key otherwise. After the sizes.
void resolve_readout_outputs(Config &config);
void validate_sizes(const Config &config);
// Keys a new run's data task or readout would not read, given all the same
// (data.file without data.task file, weights for a coordinate readout):
// InputError naming what would read them. Not applied to a stored
// configuration (a restart's, --from's), which an older mft may have
// written with such a key ignored.
void refuse_unread_keys(const Config &config);


// Renders a value as it would be written in the INI file.
std::string to_string(const ConfigValue &value);

// The configuration as an INI file that --config reads back: one [section]
// per key prefix, every key with its value.
std::string config_as_ini(const Config &config);

} // namespace mft
