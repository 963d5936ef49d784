#include "mft/core/process_grid.hpp"

#include "mft/core/error.hpp"

#include <algorithm>
#include <string>

namespace mft {

ProcessGrid::ProcessGrid(MPI_Comm world, long long sequence_groups) : world_(world) {
  int rank = 0, size = 1;
  MPI_Comm_rank(world, &rank);
  MPI_Comm_size(world, &size);
  if (sequence_groups < 1 || sequence_groups > size || size % sequence_groups != 0)
    throw InputError(key_error("parallel.sequence_groups", std::to_string(sequence_groups),
                               "must divide the " + std::to_string(size) + (size == 1 ? " rank" : " ranks") +
                                   " of the run (ranks = head ranks x sequence groups)"));
  groups_ = static_cast<int>(sequence_groups);
  head_ranks_ = size / groups_;
  group_ = rank / head_ranks_;
  head_rank_ = rank % head_ranks_;
  MPI_Comm split = MPI_COMM_NULL;
  MPI_Comm_split(world, group_, head_rank_, &split);
  heads_ = Communicator(split);
  MPI_Comm_split(world, head_rank_, group_, &split);
  across_ = Communicator(split);
}

SequenceBlock ProcessGrid::block(long long N, int g) const {
  return {N * g / groups_, N * (g + 1) / groups_};
}

std::vector<double> ProcessGrid::gather_rows(const std::vector<double> &mine, long long N, long long per) const {
  std::vector<double> all(static_cast<size_t>(N * per));
  if (groups_ == 1 || per == 0) {
    std::copy(mine.begin(), mine.end(), all.begin());
    return all;
  }
  // Counts in rows of `per` doubles, so that no count overflows an int.
  MPI_Datatype row = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(static_cast<int>(per), MPI_DOUBLE, &row);
  MPI_Type_commit(&row);
  std::vector<int> counts(static_cast<size_t>(groups_)), starts(static_cast<size_t>(groups_));
  for (int g = 0; g < groups_; ++g) {
    const SequenceBlock b = block(N, g);
    counts[static_cast<size_t>(g)] = static_cast<int>(b.count());
    starts[static_cast<size_t>(g)] = static_cast<int>(b.begin);
  }
  MPI_Allgatherv(mine.data(), counts[static_cast<size_t>(group_)], row, all.data(), counts.data(), starts.data(),
                 row, across_);
  MPI_Type_free(&row);
  return all;
}

void ProcessGrid::sum_across(double *values, long long count) const {
  if (groups_ == 1 || count == 0) return;
  MPI_Allreduce(MPI_IN_PLACE, values, static_cast<int>(count), MPI_DOUBLE, MPI_SUM, across_);
}

} // namespace mft
