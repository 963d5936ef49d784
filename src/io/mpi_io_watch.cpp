#include "mft/io/mpi_io_watch.hpp"

#include "mft/core/error.hpp"

#include <cerrno>
#include <cstring>
#include <dlfcn.h>
#include <map>

namespace mft {
namespace {

using Describe = std::function<std::string(const std::string &)>;

// The profiling interface gives a wrapped call no argument of mft's, so the
// watched files and their describe functions live in this table: the one
// process-wide table of mft, changed only by watch_mpi_file and
// unwatch_mpi_file (MPI calls come from one thread).
std::map<MPI_File, Describe> &watched() {
  static std::map<MPI_File, Describe> table;
  return table;
}

MPI_Count bytes(int count, MPI_Datatype type) {
  MPI_Count size = 0;
  PMPI_Type_size_x(type, &size);
  return size * count;
}

// Ends the job when a write to a watched file failed or fell short: `count`
// elements of `type` asked for (count < 0: a call without a byte count).
void check_write(MPI_File file, const char *call, int rc, int count, MPI_Datatype type, const MPI_Status *status) {
  const int saved = errno; // the failed system call's
  const auto it = watched().find(file);
  if (it == watched().end()) return;
  const MPI_Count expected = count > 0 ? bytes(count, type) : 0;
  MPI_Count written = expected;
  if (rc == MPI_SUCCESS && expected > 0) MPI_Get_elements_x(status, MPI_BYTE, &written);
  if (rc == MPI_SUCCESS && written == expected) return;
  std::string why;
  if (saved == ENOSPC || saved == EDQUOT || saved == EIO || saved == EROFS || saved == EFBIG ||
      saved == ESTALE || saved == EACCES || saved == EPERM)
    why = std::strerror(saved);
  if (rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING] = "";
    int length = 0;
    MPI_Error_string(rc, text, &length);
    why += (why.empty() ? "" : "; ") + std::string(call) + ": " + text;
  } else {
    why += (why.empty() ? "" : " (") + std::string(call) + " wrote " + std::to_string(written) + " of " +
           std::to_string(expected) + " bytes" + (why.empty() ? "" : ")");
  }
  abort_job(it->second(printable(why)));
}

} // namespace

void watch_mpi_file(MPI_File file, Describe describe) { watched()[file] = std::move(describe); }

void unwatch_mpi_file(MPI_File file) { watched().erase(file); }

} // namespace mft

// The profiling-interface definitions (see the header). Each calls the next
// definition of its name, the one a profiling tool preloaded before MPI
// (Darshan, say) would have had the call, or else the PMPI_ version; and
// keeps the caller's status when it asks for one.
namespace {

template <class Function>
Function *next_definition(const char *name, Function *pmpi) {
  void *next = dlsym(RTLD_NEXT, name);
  return next ? reinterpret_cast<Function *>(next) : pmpi;
}

template <class Call>
int watched_write(MPI_File file, const char *name, int count, MPI_Datatype type, MPI_Status *status, Call call) {
  MPI_Status local;
  MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
  errno = 0;
  const int rc = call(st);
  mft::check_write(file, name, rc, count, type, st);
  return rc;
}

} // namespace

// C linkage spelled out: a definition whose signature strayed from mpi.h's
// declaration fails to compile instead of becoming a C++ overload that no
// caller reaches.
extern "C" {

int MPI_File_write_at(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype type,
                      MPI_Status *status) {
  static auto *const next = next_definition("MPI_File_write_at", &PMPI_File_write_at);
  return watched_write(fh, "MPI_File_write_at", count, type, status,
                       [&](MPI_Status *st) { return next(fh, offset, buf, count, type, st); });
}

int MPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype type,
                          MPI_Status *status) {
  static auto *const next = next_definition("MPI_File_write_at_all", &PMPI_File_write_at_all);
  return watched_write(fh, "MPI_File_write_at_all", count, type, status,
                       [&](MPI_Status *st) { return next(fh, offset, buf, count, type, st); });
}

int MPI_File_write(MPI_File fh, const void *buf, int count, MPI_Datatype type, MPI_Status *status) {
  static auto *const next = next_definition("MPI_File_write", &PMPI_File_write);
  return watched_write(fh, "MPI_File_write", count, type, status,
                       [&](MPI_Status *st) { return next(fh, buf, count, type, st); });
}

int MPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype type, MPI_Status *status) {
  static auto *const next = next_definition("MPI_File_write_all", &PMPI_File_write_all);
  return watched_write(fh, "MPI_File_write_all", count, type, status,
                       [&](MPI_Status *st) { return next(fh, buf, count, type, st); });
}

int MPI_File_set_size(MPI_File fh, MPI_Offset size) {
  static auto *const next = next_definition("MPI_File_set_size", &PMPI_File_set_size);
  errno = 0;
  const int rc = next(fh, size);
  mft::check_write(fh, "MPI_File_set_size", rc, -1, MPI_BYTE, nullptr);
  return rc;
}

int MPI_File_sync(MPI_File fh) {
  static auto *const next = next_definition("MPI_File_sync", &PMPI_File_sync);
  errno = 0;
  const int rc = next(fh);
  mft::check_write(fh, "MPI_File_sync", rc, -1, MPI_BYTE, nullptr);
  return rc;
}

} // extern "C"
