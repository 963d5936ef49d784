#include "mft/core/input_file.hpp"

#include "mft/core/error.hpp"

#include <cerrno>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

namespace mft {

std::string folder_of(const std::string &path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string base_name(const std::string &path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string file_kind(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "a special file";
}

long long require_regular_input(const std::string &key, const std::string &path) {
  if (path.empty()) throw InputError(key_error(key, path, "no file name"));
  struct stat st {};
  if (stat(path.c_str(), &st) != 0)
    throw InputError(key_error(key, path, std::string("cannot open it: ") + std::strerror(errno)));
  if (!S_ISREG(st.st_mode))
    throw InputError(key_error(key, path, "is " + file_kind(st.st_mode) + ", not a regular file"));
  if (access(path.c_str(), R_OK) != 0)
    throw InputError(key_error(key, path, std::string("cannot read it: ") + std::strerror(errno)));
  return static_cast<long long>(st.st_size);
}

} // namespace mft
