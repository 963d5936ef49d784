#pragma once
// What a run will hold in memory, estimated from the configuration before
// anything large is allocated, and the limit it must fit in.
#include "mft/core/config.hpp"

#include <mpi.h>
#include <string>
#include <vector>

namespace mft {

enum class Job { Forward, Train, Ntk };

struct MemoryPart {
  std::string what; // "depth trajectory", ...
  long double bytes;
  std::string key, value; // the key that drives it, as the user wrote it
};

struct MemoryEstimate {
  std::vector<MemoryPart> parts;
  long double total = 0;  // bytes per rank
  long double limit = 0;  // bytes per rank; 0: unknown (no check)
  std::string limit_from; // "run.max_memory", or how MemAvailable was shared
  std::string checkpoints; // the adjoint's checkpoints, for the header; "" without

  // "about 1.2 GiB per rank (limit 11 GiB: ...)", for the run header.
  std::string summary() const;
};

// The memory one rank may use: run.max_memory, or else MemAvailable of its
// node shared by the ranks on that node, or under Slurm the job's allocation
// when tighter (SLURM_MEM_PER_NODE shared by the node's ranks, or
// SLURM_MEM_PER_CPU x SLURM_CPUS_PER_TASK); the tightest rank decides, 0 when
// unknown. Collective on comm.
struct MemoryLimit {
  long double bytes = 0;
  std::string from;
};
MemoryLimit memory_limit(MPI_Comm comm, const Config &config);

// Bytes per rank of a `job` on N sequences of n tokens under `config`, on a
// grid of `head_ranks` x `groups` ranks: the data, token states and
// integrator stages of a group's block of sequences, the depth trajectory
// (training), particles and their copies, kernel workspace, the NTK's
// Jacobian and Gram matrix. `data_key`/`data_value` name what decides N and
// n (data.sequences, data.file, --restart, --from).
MemoryEstimate estimate_memory(const MemoryLimit &limit, const Config &config, long long N, long long n,
                               int head_ranks, int groups, Job job, const std::string &data_key,
                               const std::string &data_value);

// depth.checkpoint_slices for the adjoint's trajectory: the configured value,
// or for auto 0 (every step kept) when the run fits the limit, else the
// spacing that fits with the fewest slices recomputed, else the one that
// needs least. 0 for a forward job. Same arguments as estimate_memory.
long long plan_depth_checkpoints(const MemoryLimit &limit, const Config &config, long long N, long long n,
                                 int head_ranks, int groups, Job job, const std::string &data_key,
                                 const std::string &data_value);
// Slices the adjoint recomputes per gradient with a checkpoint every
// `checkpoint_slices` of `slices` (all but the last segment's); 0 without.
long long depth_recomputed_slices(long long slices, long long checkpoint_slices);
// For the run header: the checkpoints of `config` (resolved), what one
// solve's trajectory of states of `state_bytes` holds with them and without,
// and the slices recomputed; "" without checkpoints.
std::string describe_depth_checkpoints(const Config &config, long long stages, long double state_bytes);

// InputError `KEY = VALUE: why` when an index would overflow (a state of
// more than 2^31 - 1 values, which PETSc's and MPI's counts cannot address)
// or the estimate exceeds the limit; names the key that drives the largest
// part, and the keys that would shrink it.
void require_fits(const MemoryEstimate &estimate, const Config &config, long long N, long long n,
                  Job job, const std::string &data_key, const std::string &data_value);

// "1.5 GiB", "320 MiB".
std::string format_bytes(long double bytes);

} // namespace mft
