#pragma once
// The output-file policy, on the file system (rank 0 alone calls these):
//  - only a regular file (or nothing) may be at an output path: a device, a
//    FIFO or a folder there is refused, whatever output.overwrite says;
//  - an existing output file is refused unless output.overwrite = true;
//  - an output that is also an input of the run is always refused;
//  - one writer per file: a run holds a lock on its file while it writes,
//    and a second run on the same file is refused;
//  - a new file appears under its name only once it is readable: it is
//    built under a hidden name beside it (.NAME.partial) and renamed into
//    place after its first complete snapshot.
//
// The lock is an open-file-description lock (F_OFD_SETLK) on one byte far
// past any data: the kernel drops it when the process dies, so a killed run
// leaves no stale lock and no lock file; it does not block HDF5's own
// flock() of readers, nor MPI-IO's range locks on the data.
#include <string>
#include <utility>
#include <vector>

namespace mft {

// (key, path) of a file the run reads, e.g. {"data.file", "d.h5"}.
using InputFiles = std::vector<std::pair<std::string, std::string>>;

// Bytes an unprivileged writer may still use on the file system of the
// folder of `path` (statvfs: quotas are not counted); -1 when it cannot be
// told.
long long free_bytes(const std::string &path);

// Reserves `bytes` of disk blocks past the end of the open file `fd`,
// without changing its size (fallocate with FALLOC_FL_KEEP_SIZE): 0 and the
// reservation's `end`, or the errno (ENOSPC, EDQUOT; EOPNOTSUPP where the
// file system cannot reserve).
int reserve_space(int fd, long long bytes, long long *end);
// Frees the blocks reserved past the file's end, up to `end`.
void release_reserved_space(int fd, long long end);

// True when both paths exist and name the same file.
bool same_file(const std::string &a, const std::string &b);

// InputError `key = path: why` unless `path` names a file that can be
// created or written in an existing, writable folder (and is no folder).
void check_writable_folder(const std::string &key, const std::string &path);

// Checks that `path` may become this run's new output file, before any
// computation: InputError `output.file = PATH: why` when its folder is missing
// or not writable, it is a folder, it is one of `inputs`, it exists and
// `overwrite` is false (naming `instead`, another way out, when given), or
// another mft run is writing it.
void check_new_output(const std::string &path, bool overwrite, const InputFiles &inputs,
                      const std::string &instead = "");

// Checks that `path` may be a text file this run appends to (its log),
// before any computation: InputError `key = path: why` when it is one of
// `files` (the run's inputs and its run file), exists as anything but a
// regular file (a FIFO would block the open, a device swallow the text) or
// cannot be written, or its folder is missing or not writable.
void check_appended_output(const std::string &key, const std::string &path, const InputFiles &files);

// Checks that no other process writes the existing file `path` (a run file
// about to be restarted): InputError `key = path: why` when another mft run
// holds its lock, another process holds HDF5's write lock (flock) on it, or
// a process of this node has it open for writing (seen through /proc).
// Writers on other nodes that take no lock cannot be seen.
void check_no_other_writer(const std::string &key, const std::string &path);

// The write lock of one run file, held by an open descriptor.
class WriterLock {
public:
  WriterLock() = default;
  // Locks the existing file `path`; InputError `key = path: another mft run
  // is writing it` when it is locked.
  WriterLock(const std::string &path, const std::string &key);
  ~WriterLock() { release(); }
  WriterLock(WriterLock &&o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  WriterLock &operator=(WriterLock &&o) noexcept;
  WriterLock(const WriterLock &) = delete;
  WriterLock &operator=(const WriterLock &) = delete;
  void release();
  int fd() const { return fd_; }
  // Why the locked file is no longer at `path` (removed with its folder,
  // moved, replaced: what the run wrote would be lost), or "".
  std::string gone_from(const std::string &path) const;

private:
  friend class PendingOutput;
  int fd_ = -1;
};

// A new output file under construction at its hidden name, locked.
class PendingOutput {
public:
  // The hidden name beside `path` that the file is built under.
  static std::string partial_path(const std::string &path);

  PendingOutput() = default;
  // Creates and locks partial_path(path) (removing a stale one that no run
  // holds); InputError naming output.file when that is impossible.
  PendingOutput(const std::string &path, bool overwrite);
  PendingOutput(PendingOutput &&) = default;
  PendingOutput &operator=(PendingOutput &&) = default;

  // Copies the bytes of `source` into the partial file (a restart that
  // continues a copy of its run file).
  void fill_from(const std::string &source);
  // Renames the partial file to its final name (refusing to replace a file
  // that appeared meanwhile unless overwrite). The lock stays held.
  void publish();
  // Removes the file, at whichever name it has; releases the lock.
  void remove();
  bool published() const { return published_; }
  const std::string &path() const { return path_; }
  const std::string &partial() const { return partial_; }
  WriterLock &lock() { return lock_; }

private:
  std::string path_, partial_;
  bool overwrite_ = false, published_ = false;
  WriterLock lock_;
};

} // namespace mft
