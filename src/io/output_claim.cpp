#include "mft/io/output_claim.hpp"

#include "mft/core/error.hpp"
#include "mft/core/input_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <vector>

namespace mft {
namespace {

constexpr off_t kLockByte = off_t(1) << 62; // beyond any data an HDF5 file holds

std::string why_errno(const char *what) { return std::string(what) + ": " + std::strerror(errno); }

// Why an output path holding something other than a regular file is left alone.
std::string not_replaceable(mode_t mode) {
  return "is " + file_kind(mode) + ", not a regular file; mft writes its output only where nothing or a "
         "regular file is (output.overwrite does not change that)";
}

// Takes the write lock on fd: 1 taken, 0 held by another process. File
// systems without OFD locks get no protection rather than a refused run.
int try_lock(int fd) {
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  fl.l_start = kLockByte;
  fl.l_len = 1;
  if (fcntl(fd, F_OFD_SETLK, &fl) == 0) return 1;
  if (errno == EAGAIN || errno == EACCES) return 0;
  return 1;
}

// True when another process holds the lock of `path` (false if it cannot be opened).
bool locked_by_another(const std::string &path) {
  const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return false;
  const bool locked = try_lock(fd) == 0;
  close(fd);
  return locked;
}

// "process PID (NAME)" for a process other than this one that has the file
// (dev, ino) open for writing, found through /proc (the processes of this
// node that this user may inspect); "" when none is seen.
std::string writing_process(dev_t dev, ino_t ino) {
  DIR *proc = opendir("/proc");
  if (!proc) return "";
  std::string found;
  const std::string self = std::to_string(getpid());
  while (const dirent *p = readdir(proc)) {
    const std::string pid = p->d_name;
    if (pid.find_first_not_of("0123456789") != std::string::npos || pid == self) continue;
    const std::string fd_folder = "/proc/" + pid + "/fd";
    DIR *fds = opendir(fd_folder.c_str());
    if (!fds) continue;
    while (const dirent *f = readdir(fds)) {
      // Cached attributes only: a descriptor on a dead network mount must
      // not hang the scan.
      struct statx st {};
      if (f->d_name[0] == '.' ||
          statx(AT_FDCWD, (fd_folder + "/" + f->d_name).c_str(), AT_STATX_DONT_SYNC | AT_NO_AUTOMOUNT,
                STATX_INO, &st) != 0)
        continue;
      if (makedev(st.stx_dev_major, st.stx_dev_minor) != dev || st.stx_ino != ino) continue;
      std::ifstream info("/proc/" + pid + "/fdinfo/" + f->d_name);
      std::string field;
      unsigned long flags = 0;
      while (info >> field)
        if (field == "flags:" && info >> std::oct >> flags) break;
      if ((flags & O_ACCMODE) == O_RDONLY) continue;
      std::ifstream comm("/proc/" + pid + "/comm");
      std::string name;
      std::getline(comm, name);
      found = "process " + pid + (name.empty() ? "" : " (" + printable(name) + ")");
      break;
    }
    closedir(fds);
    if (!found.empty()) break;
  }
  closedir(proc);
  return found;
}

} // namespace

void check_no_other_writer(const std::string &key, const std::string &path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return; // the reader says what is wrong
  const std::string advice = "; a restart beside another writer would corrupt the file: close it there first";
  if (locked_by_another(path)) throw InputError(key_error(key, path, "another mft run is writing it"));
  // HDF5 (h5py, h5repack, ...) holds an exclusive flock() on a file it
  // opened for writing, unless HDF5_USE_FILE_LOCKING=FALSE.
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd >= 0) {
    const bool held = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    close(fd);
    if (held) throw InputError(key_error(key, path, "another process holds HDF5's write lock on it" + advice));
  }
  // Without the lock: any process of this node with it open for writing.
  const std::string writer = writing_process(st.st_dev, st.st_ino);
  if (!writer.empty()) throw InputError(key_error(key, path, writer + " has it open for writing" + advice));
}

long long free_bytes(const std::string &path) {
  struct statvfs fs {};
  if (statvfs(folder_of(path).c_str(), &fs) != 0) return -1;
  return static_cast<long long>(fs.f_bavail) * static_cast<long long>(fs.f_frsize);
}

int reserve_space(int fd, long long bytes, long long *end) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return errno;
  // Blocks past the end, the size unchanged: later writes there cannot fail
  // for space.
  while (fallocate(fd, FALLOC_FL_KEEP_SIZE, st.st_size, bytes) != 0)
    if (errno != EINTR) return errno;
  *end = st.st_size + bytes;
  return 0;
}

void release_reserved_space(int fd, long long end) {
  struct stat st {};
  if (fstat(fd, &st) != 0 || end <= st.st_size) return;
  // A truncation to the same size frees the blocks past the end on ext4 and
  // XFS; punching them out does on tmpfs, which ignores such a truncation.
  if (ftruncate(fd, st.st_size) != 0) return;
  fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, st.st_size, end - st.st_size);
}

bool same_file(const std::string &a, const std::string &b) {
  struct stat sa {}, sb {};
  if (stat(a.c_str(), &sa) != 0 || stat(b.c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

void check_writable_folder(const std::string &key, const std::string &path) {
  struct stat st {};
  const std::string folder = folder_of(path);
  if (stat(folder.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw InputError(key_error(key, path, "its folder " + folder + " does not exist"));
  if (access(folder.c_str(), W_OK | X_OK) != 0)
    throw InputError(key_error(key, path, why_errno(("cannot write in the folder " + folder).c_str())));
  if (stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw InputError(key_error(key, path, "is a folder"));
  } else if (errno != ENOENT) { // a name too long, a component that is not a folder
    throw InputError(key_error(key, path, why_errno("cannot use this name")));
  }
}

void check_appended_output(const std::string &key, const std::string &path, const InputFiles &files) {
  for (const auto &[file_key, file] : files)
    if (!file.empty() && (path == file || same_file(path, file)))
      throw InputError(key_error(key, path, "is also this run's " + file_key + "; the log is a text file of its own"));
  check_writable_folder(key, path);
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return;
  if (!S_ISREG(st.st_mode))
    throw InputError(key_error(key, path, "is " + file_kind(st.st_mode) +
                                              ", not a regular file; mft appends only to a regular file or a new one"));
  if (access(path.c_str(), W_OK) != 0) throw InputError(key_error(key, path, why_errno("cannot write it")));
}

void check_new_output(const std::string &path, bool overwrite, const InputFiles &inputs,
                      const std::string &instead) {
  const std::string key = "output.file";
  for (const auto &[input_key, input] : inputs)
    if (!input.empty() && same_file(path, input))
      throw InputError(key_error(key, path, "is also this run's input " + input_key +
                                                "; write the output to another file"));
  check_writable_folder(key, path);
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return;
  if (!S_ISREG(st.st_mode)) throw InputError(key_error(key, path, not_replaceable(st.st_mode)));
  if (locked_by_another(path)) throw InputError(key_error(key, path, "another mft run is writing it"));
  if (!overwrite)
    throw InputError(key_error(key, path, "exists; " + (instead.empty() ? "" : instead + ", or ") +
                                              "set output.overwrite = true to replace it"));
}

WriterLock::WriterLock(const std::string &path, const std::string &key) {
  fd_ = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd_ < 0) throw InputError(key_error(key, path, why_errno("cannot open it for writing")));
  if (try_lock(fd_) == 0) {
    release();
    throw InputError(key_error(key, path, "another mft run is writing it"));
  }
}

WriterLock &WriterLock::operator=(WriterLock &&o) noexcept {
  if (this != &o) {
    release();
    fd_ = std::exchange(o.fd_, -1);
  }
  return *this;
}

void WriterLock::release() {
  if (fd_ >= 0) close(fd_); // closing the last descriptor drops the OFD lock
  fd_ = -1;
}

std::string WriterLock::gone_from(const std::string &path) const {
  struct stat mine {}, there {};
  if (fd_ < 0 || fstat(fd_, &mine) != 0) return "";
  if (mine.st_nlink == 0) return "was removed (or its folder) while the run wrote it";
  if (stat(path.c_str(), &there) != 0 || there.st_dev != mine.st_dev || there.st_ino != mine.st_ino)
    return "was moved or replaced while the run wrote it";
  return "";
}

std::string PendingOutput::partial_path(const std::string &path) {
  const auto slash = path.find_last_of('/');
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  const std::string folder = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  return folder + "." + name + ".partial";
}

PendingOutput::PendingOutput(const std::string &path, bool overwrite)
    : path_(path), partial_(partial_path(path)), overwrite_(overwrite) {
  const std::string key = "output.file";
  for (int attempt = 0; attempt < 2; ++attempt) {
    const int fd = open(partial_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      lock_.fd_ = fd;
      try_lock(fd); // a new inode: nobody else can hold it
      return;
    }
    if (errno != EEXIST) throw InputError(key_error(key, path, why_errno(("cannot create " + partial_).c_str())));
    struct stat st {};
    if (lstat(partial_.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
      throw InputError(key_error(key, path, partial_ + " " + not_replaceable(st.st_mode)));
    // A partial file left by a killed run is nobody's: remove it and retry.
    if (locked_by_another(partial_))
      throw InputError(key_error(key, path, "another mft run is creating it"));
    ::unlink(partial_.c_str());
  }
  throw InputError(key_error(key, path, "cannot create " + partial_));
}

void PendingOutput::fill_from(const std::string &source) {
  const int in = open(source.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) throw Error("copying " + source + ": " + std::strerror(errno));
  std::vector<char> buffer(1 << 20);
  ssize_t got = 0;
  while ((got = read(in, buffer.data(), buffer.size())) > 0)
    for (ssize_t done = 0; done < got;) {
      const ssize_t put = write(lock_.fd_, buffer.data() + done, static_cast<size_t>(got - done));
      if (put < 0) {
        close(in);
        throw Error("copying " + source + " to " + path_ + ": " + std::strerror(errno));
      }
      done += put;
    }
  close(in);
  if (got < 0) throw Error("reading " + source + ": " + std::strerror(errno));
  if (fsync(lock_.fd_) != 0) throw Error("copying " + source + " to " + path_ + ": " + std::strerror(errno));
}

void PendingOutput::publish() {
  if (published_) return;
  // Checked before the run began; checked again, since a rename replaces anything.
  struct stat st {};
  if (stat(path_.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    throw InputError(key_error("output.file", path_, not_replaceable(st.st_mode)));
  int status = 0;
  if (overwrite_) {
    status = std::rename(partial_.c_str(), path_.c_str());
  } else {
    status = renameat2(AT_FDCWD, partial_.c_str(), AT_FDCWD, path_.c_str(), RENAME_NOREPLACE);
    if (status != 0 && errno == EINVAL) { // no RENAME_NOREPLACE here: link fails on an existing name
      status = link(partial_.c_str(), path_.c_str());
      if (status == 0) ::unlink(partial_.c_str());
    }
  }
  if (status != 0) {
    const std::string why = errno == EEXIST ? "appeared while this run was starting; it was left alone"
                                            : std::strerror(errno);
    throw InputError(key_error("output.file", path_, why));
  }
  published_ = true;
}

void PendingOutput::remove() {
  if (!path_.empty()) ::unlink((published_ ? path_ : partial_).c_str());
  lock_.release();
}

} // namespace mft
