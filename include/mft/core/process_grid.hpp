#pragma once
// The 2-D process grid: P = P_h x P_s ranks. Sequence group g (P_s of them,
// parallel.sequence_groups) holds a block of the N sequences; inside a group
// the P_h ranks split the heads of every slice, as one group did before, and
// all-reduce the field over the group's sequences alone. Ranks that hold the
// same heads in different groups form an `across` communicator: it sums the
// particle gradients (one all-reduce per gradient) and gathers the
// predictions, so every group holds the same particles at every step.
//
//   world rank r:  group g = r / P_h,  head rank h = r % P_h
#include <mpi.h>

#include <utility>
#include <vector>

namespace mft {

// Owns an MPI communicator made by a split (MPI_Comm_free on destruction).
class Communicator {
public:
  Communicator() = default;
  explicit Communicator(MPI_Comm comm) : comm_(comm) {}
  ~Communicator() { reset(); }
  Communicator(Communicator &&other) noexcept : comm_(std::exchange(other.comm_, MPI_COMM_NULL)) {}
  Communicator &operator=(Communicator &&other) noexcept {
    if (this != &other) {
      reset();
      comm_ = std::exchange(other.comm_, MPI_COMM_NULL);
    }
    return *this;
  }
  Communicator(const Communicator &) = delete;
  Communicator &operator=(const Communicator &) = delete;
  operator MPI_Comm() const { return comm_; }

private:
  void reset() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (comm_ != MPI_COMM_NULL && !finalized) MPI_Comm_free(&comm_);
    comm_ = MPI_COMM_NULL;
  }
  MPI_Comm comm_ = MPI_COMM_NULL;
};

// The sequences [begin, end) of one group.
struct SequenceBlock {
  long long begin = 0, end = 0;
  long long count() const { return end - begin; }
};

class ProcessGrid {
public:
  // InputError naming parallel.sequence_groups when it does not divide the
  // size of `world`. Collective on world.
  ProcessGrid(MPI_Comm world, long long sequence_groups);

  MPI_Comm world() const { return world_; }
  MPI_Comm heads() const { return heads_; }   // the ranks of this group
  MPI_Comm across() const { return across_; } // one rank per group, same heads
  int groups() const { return groups_; }      // P_s
  int group() const { return group_; }
  int head_ranks() const { return head_ranks_; } // P_h
  int head_rank() const { return head_rank_; }

  // Group g's block of N sequences: floor(N g / P_s) .. floor(N (g+1) / P_s).
  SequenceBlock block(long long N, int g) const;
  SequenceBlock block(long long N) const { return block(N, group_); }

  // rows (N x per values, replicated size) from every group's block of
  // `mine` (block(N).count() x per values): an all-gather across groups.
  std::vector<double> gather_rows(const std::vector<double> &mine, long long N, long long per) const;
  // Sums values over the groups in place (a no-op for one group).
  void sum_across(double *values, long long count) const;

private:
  MPI_Comm world_;
  int groups_ = 1, group_ = 0, head_ranks_ = 1, head_rank_ = 0;
  Communicator heads_, across_;
};

} // namespace mft
