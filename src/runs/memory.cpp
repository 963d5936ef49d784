#include "mft/runs/memory.hpp"

#include "mft/depth/depth.hpp"

#include "mft/core/error.hpp"
#include "mft/model/particles.hpp"
#include "mft/tasks/task.hpp"
#include "mft/train/optimizer.hpp"

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <sys/resource.h>
#include <tuple>

namespace mft {
namespace {

// The particles' values of every species (the layout's matrices): this
// rank's largest share over `head_ranks` ranks, and its kernels' products.
struct ParticleValues {
  long double mine = 0, kernels = 0;
};
ParticleValues particle_values(const ModelConfig &model, int head_ranks) {
  ParticleValues out;
  const Particles layout = particle_layout(model, model.heads, 0, 0); // shapes only: no storage
  for (const ParticleSpecies *s : layout.species()) {
    long double per = 0;
    for (const ParticleMatrix &m : s->matrices()) per += static_cast<long double>(m.size());
    const long double share = static_cast<long double>((s->M + head_ranks - 1) / head_ranks);
    out.mine += static_cast<long double>(s->L) * share * per;
    out.kernels += static_cast<long double>(s->L) * share * static_cast<long double>(s->kernel_values());
  }
  return out;
}

// MemAvailable of this node, in bytes; 0 when /proc/meminfo has none.
long double mem_available() {
  std::ifstream in("/proc/meminfo");
  std::string name, unit;
  long double kib = 0;
  while (in >> name >> kib) {
    std::getline(in, unit);
    if (name == "MemAvailable:") return kib * 1024;
  }
  return 0;
}

// A positive number of megabytes in environment variable `name` (Slurm
// writes --mem=4G as SLURM_MEM_PER_NODE=4096), else 0.
long double slurm_megabytes(const char *name) {
  const char *text = std::getenv(name);
  if (!text || !*text) return 0.0L;
  char *end = nullptr;
  const double v = std::strtod(text, &end);
  return end && *end == '\0' && v > 0 ? v : 0.0L;
}

} // namespace

std::string format_bytes(long double bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024 && u < 6) {
    bytes /= 1024;
    ++u;
  }
  char text[48];
  std::snprintf(text, sizeof text, bytes < 10 && u > 0 ? "%.1Lf %s" : "%.0Lf %s", bytes, units[u]);
  return text;
}

std::string MemoryEstimate::summary() const {
  std::string s = "about " + format_bytes(total) + " per rank";
  if (limit > 0) s += " (limit " + format_bytes(limit) + ": " + limit_from + ")";
  return s;
}

namespace {

// Kept free under an address-space limit for what the estimate does not
// count: OpenBLAS's buffers (tens of MiB per thread, mapped at the first
// product), PETSc's and HDF5's working memory, malloc's arenas. OpenBLAS
// retries a failed mapping for ever, so running short here is a hang.
constexpr long double kAddressReserve = 256.0L * 1048576.0L;

// A kB line of /proc/self/status ("VmSize:"), in bytes; 0 when absent.
long double own_status_bytes(const std::string &field) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(field, 0) == 0) return std::strtold(line.c_str() + field.size(), nullptr) * 1024;
  return 0;
}

// What the process's limits (ulimit -v: RLIMIT_AS, ulimit -d: RLIMIT_DATA)
// still allow it to map, less the reserve; 0 and "" when unlimited.
std::pair<long double, std::string> address_space_left() {
  std::pair<long double, std::string> tightest{0.0L, ""};
  for (const auto &[resource, field, name] : {std::tuple{RLIMIT_AS, "VmSize:", "ulimit -v (RLIMIT_AS)"},
                                              std::tuple{RLIMIT_DATA, "VmData:", "ulimit -d (RLIMIT_DATA)"}}) {
    struct rlimit rl {};
    if (getrlimit(resource, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) continue;
    const long double cap = static_cast<long double>(rl.rlim_cur), used = own_status_bytes(field);
    const long double left = std::max(1.0L, cap - used - kAddressReserve);
    if (tightest.first == 0 || left < tightest.first)
      tightest = {left, std::string(name) + " " + format_bytes(cap) + ", of which " + format_bytes(used) +
                            " mapped at start-up and " + format_bytes(kAddressReserve) + " kept for libraries"};
  }
  return tightest;
}

// The node's memory (or run.max_memory, or Slurm's allocation) a rank may use.
MemoryLimit node_memory_limit(MPI_Comm comm, const Config &c) {
  MemoryLimit limit;
  if (c.run.max_memory > 0) {
    limit.bytes = c.run.max_memory;
    limit.from = "run.max_memory";
    return limit;
  }
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int on_node = 1;
  MPI_Comm_size(node, &on_node);
  MPI_Comm_free(&node);
  const long double available = mem_available();
  // Under Slurm the job's allocation (--mem per node, --mem-per-cpu per
  // task's CPUs) bounds a rank before the node's free memory does.
  const long double slurm_node = slurm_megabytes("SLURM_MEM_PER_NODE") * 1048576.0L;
  const long double slurm_cpu = slurm_megabytes("SLURM_MEM_PER_CPU") * 1048576.0L;
  const long double cpus = std::max(1.0L, slurm_megabytes("SLURM_CPUS_PER_TASK"));
  long double share = available > 0 ? available / on_node : 0.0L;
  std::string from = "MemAvailable " + format_bytes(available) + " shared by the node's " +
                     std::to_string(on_node) + (on_node == 1 ? " rank" : " ranks");
  if (slurm_node > 0 && (share <= 0 || slurm_node / on_node < share)) {
    share = slurm_node / on_node;
    from = "Slurm's --mem " + format_bytes(slurm_node) + " shared by the node's " + std::to_string(on_node) +
           (on_node == 1 ? " rank" : " ranks");
  } else if (slurm_cpu > 0 && (share <= 0 || slurm_cpu * cpus < share)) {
    share = slurm_cpu * cpus;
    from = "Slurm's --mem-per-cpu " + format_bytes(slurm_cpu) + " x " + std::to_string(static_cast<int>(cpus)) +
           (cpus == 1 ? " CPU" : " CPUs") + " of a task";
  }
  // The tightest rank decides, so every rank takes the same decision.
  double mine = static_cast<double>(share), tightest = 0.0;
  MPI_Allreduce(&mine, &tightest, 1, MPI_DOUBLE, MPI_MIN, comm);
  if (tightest > 0) {
    limit.bytes = tightest;
    limit.from = from;
  }
  return limit;
}

} // namespace

MemoryLimit memory_limit(MPI_Comm comm, const Config &c) {
  MemoryLimit limit = node_memory_limit(comm, c);
  // The process's own limits bound a rank whatever the node has; every rank
  // takes the tightest (an unlimited rank offers the largest double).
  const auto [left, why] = address_space_left();
  const double mine = left > 0 ? static_cast<double>(left) : DBL_MAX;
  double tightest = mine;
  MPI_Allreduce(&mine, &tightest, 1, MPI_DOUBLE, MPI_MIN, comm);
  if (tightest < DBL_MAX && (limit.bytes <= 0 || tightest < limit.bytes)) {
    limit.bytes = tightest;
    limit.from = mine == tightest ? why : "the address-space limit of another rank";
  }
  return limit;
}


MemoryEstimate estimate_memory(const MemoryLimit &limit, const Config &c, long long N, long long n,
                               int head_ranks, int groups, Job job, const std::string &data_key,
                               const std::string &data_value) {
  const long double d = c.model.d, L = c.model.slices;
  const long double heads = (c.model.heads + head_ranks - 1) / head_ranks; // this rank's share, at most
  // The token states of this group's block of sequences; the data itself
  // (all N) is on every rank.
  const long long N_group = (N + groups - 1) / groups;
  const long double data = static_cast<long double>(N) * n * d * sizeof(double);
  const long double state = static_cast<long double>(N_group) * n * d * sizeof(double);
  const long double s = depth_stages(c.depth); // PETSc's tableau
  const long double steps = L * c.depth.steps_per_slice;
  // States one adjoint's trajectory keeps (checkpoints: a segment's and the checkpoints).
  const long double trajectory =
      depth_trajectory_states(c.model.slices, c.depth.steps_per_slice, static_cast<long long>(s),
                              c.depth.checkpoint_slices);
  const ParticleValues values = particle_values(c.model, head_ranks);
  const long double particles = values.mine * sizeof(double);
  const bool trains = job != Job::Forward;
  const std::string heads_value = std::to_string(c.model.heads);

  MemoryEstimate e;
  // The data; the group's block of it, X(1), the solver's state and its
  // 2s + 2 work vectors; training adds the adjoint's s + 8 vectors of the
  // same size.
  e.parts.push_back({"token states", data + state * ((2 * s + 5) + (trains ? s + 8 : 0)), data_key, data_value});
  // The memory trajectory: every step's stages, or with checkpoints a segment's.
  if (trains) e.parts.push_back({"depth trajectory", state * trajectory, data_key, data_value});
  // mft forward's tokens through depth: the recorded states and their copy as written.
  if (job == Job::Forward && c.forward.tokens_depth) {
    const long double rows = (c.forward.every_step ? steps : L) + 1;
    e.parts.push_back({"tokens through depth", 2 * rows * state, data_key, data_value});
  }
  // Minibatches: their own states and trajectory for b sequences.
  const long long b = c.train.batch;
  if (trains && b > 0 && (b < N || c.data.online)) {
    const long double batch_state = static_cast<long double>((b + groups - 1) / groups) * n * d * sizeof(double);
    // Online batches: every rank draws the whole batch, and a fresh copy.
    const long double online = c.data.online ? 2.0L * b * n * d * sizeof(double) : 0.0L;
    e.parts.push_back({"minibatch states and trajectory", batch_state * ((3 * s + 13) + trajectory) + online,
                       "train.batch", std::to_string(b)});
  }
  // The optimiser's state arrays (each the size of the particles).
  const size_t state_arrays = trains ? optimizer_state_layout(c.train.method).arrays.size() : 0;
  if (state_arrays > 0)
    e.parts.push_back({"optimizer state", static_cast<long double>(state_arrays) * particles, "train.method",
                       c.train.method});
  // The particles, their kernels' products of them (attention: B = Q^T K, V
  // and V^T per head), and the training vectors (theta, gradient, velocity,
  // the training TS's work).
  const long double kernel_copies = values.kernels * sizeof(double);
  e.parts.push_back({"particles", particles * (trains ? 10 : 1) + kernel_copies, "model.heads", heads_value});
  const long double block = std::max<long double>(16384, n * heads * d);
  e.parts.push_back({"kernel workspace", (4 * block + 2 * n * n * heads) * sizeof(double), "model.heads", heads_value});
  if (job == Job::Ntk || c.ntk.every > 0) {
    // The sweep of ntk_spectrum: every sequence's and output's parameter
    // cotangents of one slice in the kernels' layout (at most their products
    // of one slice's particles), that slice's rows J_l of this group and of
    // all, for each kernel made (K_V and K_all, and mft ntk's ntk.part when
    // it is another), each kernel's Gram and the eigen-solver's two copies,
    // and the sweep's own trajectory and d_out cotangents.
    const long double kernels = job == Job::Ntk && c.ntk.part != "V" && c.ntk.part != "all" ? 3 : 2;
    const long double outputs = c.readout.dim, per_slice = values.mine / L;
    const long double rows = static_cast<long double>(N_group) * outputs * values.kernels / L;
    const long double jacobian = kernels * (static_cast<long double>(N_group) + N) * outputs * per_slice;
    const long double gram = (kernels + 2) * N * N * outputs * outputs;
    e.parts.push_back({"NTK rows, one slice's Jacobian and the Gram", (rows + jacobian + gram) * sizeof(double) +
                                                                          state * (trajectory + outputs * (s + 2)),
                       data_key, data_value});
  }
  // What the task holds while it makes the data (a teacher's particles).
  for (const TaskMemory &t : task_memory(c, head_ranks, groups, data, s))
    e.parts.push_back({t.what, t.bytes, t.key.empty() ? data_key : t.key, t.key.empty() ? data_value : t.value});
  e.parts.push_back({"libraries (MPI, PETSc, HDF5)", 64.0L * (1 << 20), "", ""});
  for (const MemoryPart &p : e.parts) e.total += p.bytes;

  e.limit = limit.bytes;
  e.limit_from = limit.from;
  return e;
}

long long plan_depth_checkpoints(const MemoryLimit &limit, const Config &c, long long N, long long n,
                                 int head_ranks, int groups, Job job, const std::string &data_key,
                                 const std::string &data_value) {
  if (job == Job::Forward) return 0;
  if (c.depth.checkpoint_slices != kDepthCheckpointsAuto) return c.depth.checkpoint_slices;
  Config plan = c;
  const auto need = [&](long long slices) {
    plan.depth.checkpoint_slices = slices;
    return estimate_memory(limit, plan, N, n, head_ranks, groups, job, data_key, data_value).total;
  };
  if (limit.bytes <= 0 || need(0) <= limit.bytes) return 0;
  // Of the spacings that fit, the one that recomputes fewest slices (all
  // but the last segment's), the less memory between equals; when none
  // fits, the one that needs least, for require_fits to report.
  const long long L = c.model.slices;
  long long best = 0, least = 0, best_recomputed = 0;
  long double best_bytes = 0, least_bytes = need(0);
  for (long long slices = 1; slices < L; ++slices) {
    const long double bytes = need(slices);
    const long long recomputed = depth_recomputed_slices(L, slices);
    if (bytes <= limit.bytes &&
        (best == 0 || recomputed < best_recomputed || (recomputed == best_recomputed && bytes < best_bytes))) {
      best = slices;
      best_recomputed = recomputed;
      best_bytes = bytes;
    }
    if (bytes < least_bytes) {
      least = slices;
      least_bytes = bytes;
    }
  }
  return best > 0 ? best : least;
}

long long depth_recomputed_slices(long long slices, long long checkpoint_slices) {
  if (checkpoint_slices <= 0 || checkpoint_slices >= slices) return 0;
  return (slices + checkpoint_slices - 1) / checkpoint_slices * checkpoint_slices - checkpoint_slices;
}

std::string describe_depth_checkpoints(const Config &c, long long stages, long double state_bytes) {
  const long long L = c.model.slices, k = c.depth.steps_per_slice, every = c.depth.checkpoint_slices;
  if (every <= 0 || every >= L) return "";
  const long long recomputed = depth_recomputed_slices(L, every);
  const std::string spacing = every == 1 ? "slice" : std::to_string(every) + " slices";
  char text[400];
  std::snprintf(text, sizeof text,
                "depth trajectory: a checkpoint every %s (depth.checkpoint_slices), %s per solve "
                "instead of %s for every step; the adjoint recomputes %lld of %lld slices (%.2f forward solves)",
                spacing.c_str(), format_bytes(state_bytes * depth_trajectory_states(L, k, stages, every)).c_str(),
                format_bytes(state_bytes * depth_trajectory_states(L, k, stages, 0)).c_str(), recomputed, L,
                static_cast<double>(recomputed) / static_cast<double>(L));
  return text;
}

void require_fits(const MemoryEstimate &e, const Config &c, long long N, long long n, Job job,
                  const std::string &data_key, const std::string &data_value) {
  // Counts that PETSc (32-bit PetscInt) and MPI (int) take.
  const long double state = static_cast<long double>(N) * n * c.model.d;
  if (state > INT_MAX)
    throw InputError(key_error(data_key, data_value,
                               "N n d = " + std::to_string(N) + " x " + std::to_string(n) + " x " +
                                   std::to_string(c.model.d) +
                                   " token values exceed 2^31 - 1, the most one state can index"));
  const long double global = particle_values(c.model, 1).mine;
  if (global > INT_MAX)
    throw InputError(key_error("model.heads", std::to_string(c.model.heads),
                               "the model has " + std::to_string(static_cast<long long>(global)) +
                                   " particle values, more than 2^31 - 1, the most PETSc can index"));
  if ((job == Job::Ntk || c.ntk.every > 0) && static_cast<long double>(N) * N > INT_MAX)
    throw InputError(key_error(data_key, data_value, "the NTK Gram matrix of N = " + std::to_string(N) +
                                                         " sequences has more than 2^31 - 1 entries"));
  if (e.limit <= 0 || e.total <= e.limit) return;

  std::vector<MemoryPart> parts = e.parts;
  std::sort(parts.begin(), parts.end(), [](const auto &a, const auto &b) { return a.bytes > b.bytes; });
  std::string list;
  for (const MemoryPart &p : parts)
    if (p.bytes >= e.total / 100) list += (list.empty() ? "" : ", ") + p.what + " " + format_bytes(p.bytes);
  const MemoryPart &largest = *std::find_if(parts.begin(), parts.end(), [](const auto &p) { return !p.key.empty(); });
  const std::string &top = largest.key;
  const std::string shrink = top == "model.heads"          ? "model.heads, model.slices or model.head_dim"
                             : top == "data.teacher_heads" ? "data.teacher_heads"
                             : top + ", data.tokens, model.d, model.slices or depth.steps_per_slice";
  const long long every = c.depth.checkpoint_slices;
  const std::string plan = every > 0 && every < c.model.slices
                               ? ", with a checkpoint every " +
                                     (every == 1 ? std::string("slice") : std::to_string(every) + " slices") +
                                     " in depth"
                               : "";
  const std::string why = "the run needs " + format_bytes(e.total) + " per rank (" + list + ")" + plan +
                          ", more than the " + format_bytes(e.limit) + " a rank may use (" + e.limit_from +
                          "); reduce " + shrink + (c.run.max_memory > 0 ? "" : ", or set run.max_memory");
  if (c.run.max_memory > 0)
    throw InputError(key_error("run.max_memory", std::to_string(c.run.max_memory), why));
  throw InputError(key_error(largest.key, largest.value, why));
}

} // namespace mft
