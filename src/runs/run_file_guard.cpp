// How a run file meets failures (run_file.hpp): the phases of its writes, a
// failure inside one ending the job in one line, and the disk space reserved
// before each snapshot.
#include "mft/runs/run_file.hpp"

#include "mft/core/error.hpp"
#include "mft/io/mpi_io_watch.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace mft {
namespace {

int rank_of(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}

} // namespace

void RunFile::flush() {
  if (H5Fflush(file_, H5F_SCOPE_GLOBAL) < 0) h5::fail("flushing the file");
}

void RunFile::watch() {
  watched_ = h5::mpi_file(file_);
  watch_mpi_file(watched_, [this](const std::string &why) { return failure(why); });
}

std::string RunFile::failure(const std::string &why) const {
  std::string kept;
  if ((publish_at_snapshot_ || !created_) && last_snapshot_step_ >= 0)
    kept = "; the file keeps its complete snapshots up to step " + std::to_string(last_snapshot_step_) +
           " (mft train --restart continues it)";
  return key_error(key_, path_, doing_ + ": " + why + kept);
}

void RunFile::phase(const std::string &what, const std::function<void()> &step) {
  doing_ = what;
  const double t0 = MPI_Wtime();
  ++phase_depth_;
  try {
    step();
    if (--phase_depth_ == 0) seconds_ += MPI_Wtime() - t0;
  } catch (const Error &e) {
    // This rank alone may have failed, inside a collective HDF5 call the
    // others still wait in: no agreement is possible, the job ends here.
    abort_job(failure(e.what()));
  }
}

hsize_t RunFile::snapshot_bytes() const {
  hsize_t bytes = 0;
  for (const auto &[name, ds] : particles_) bytes += h5::growth_bytes(ds, snapshots_ + 1);
  for (const auto &[name, ds] : optimizer_) bytes += h5::growth_bytes(ds, snapshots_ + 1);
  for (const auto &[name, ds] : history_) bytes += h5::growth_bytes(ds, history_rows_ + pending_.size());
  return bytes;
}

void RunFile::release_reservation() {
  const int fd = created_ ? output_.lock().fd() : lock_.fd();
  if (fd >= 0 && reserved_end_ > 0) release_reserved_space(fd, reserved_end_);
  reserved_end_ = 0;
}

void RunFile::require_space(const std::string &what, hsize_t bytes) {
  // HDF5's own structures grow with the data (chunk index nodes, heaps):
  // a generous allowance above the data's bytes.
  const auto needed = static_cast<long long>(bytes + bytes / 4 + (hsize_t(128) << 10));
  // Rank 0 reserves the blocks where HDF5 will write; where the file
  // system cannot reserve, it compares the free space instead. Every rank learns the outcome: a refusal is a
  // clean stop before anything of the snapshot is written.
  long long outcome[2] = {0, 0}; // errno, free bytes
  if (rank_of(comm_) == 0) {
    // From the file's end on, where HDF5 allocates: every flush, the last
    // before this one included, extends the file to all HDF5 has allocated.
    const int fd = created_ ? output_.lock().fd() : lock_.fd();
    long long end = 0;
    const int status = fd >= 0 ? reserve_space(fd, needed, &end) : EOPNOTSUPP;
    if (status == 0) reserved_end_ = std::max(reserved_end_, end);
    if (status != 0 && fd >= 0) release_reserved_space(fd, reserved_end_); // and what a failed one kept
    outcome[1] = free_bytes(path_);
    if (status == EOPNOTSUPP || status == ENOSYS || status == EINVAL)
      outcome[0] = outcome[1] >= 0 && outcome[1] < needed ? ENOSPC : 0;
    else
      outcome[0] = status;
  }
  MPI_Bcast(outcome, 2, MPI_LONG_LONG, 0, comm_);
  if (outcome[0] == 0) return;
  pending_.clear(); // the file stays as its last snapshot left it
  const auto kib = [](long long b) { return std::to_string((b + 1023) / 1024) + " KiB"; };
  // A quota is the user's, not the file system's: its free space says nothing.
  std::string why = what + ": " + std::strerror(static_cast<int>(outcome[0])) + " (" + kib(needed) + " needed" +
                    (outcome[0] == EDQUOT ? ")" : ", " + kib(std::max(outcome[1], 0LL)) + " free)");
  if (last_snapshot_step_ >= 0 && (publish_at_snapshot_ || !created_))
    why += "; the file holds its snapshots up to step " + std::to_string(last_snapshot_step_) +
           ": make room, then continue with mft train --restart " + path_;
  throw Error(key_error(key_, path_, why));
}

} // namespace mft
