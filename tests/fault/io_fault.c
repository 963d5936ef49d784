/* A failing file system on one rank, for the fault tests (LD_PRELOAD).
 *
 * Wraps the write calls of the C library. Writes to files whose path holds
 * MFT_IO_FAULT_FILE, on the rank MFT_IO_FAULT_RANK (OMPI_COMM_WORLD_RANK,
 * PMIX_RANK or PMI_RANK; every rank when unset), are counted; once they have
 * reached MFT_IO_FAULT_AFTER bytes, the next one fails with ENOSPC, as on a
 * full disk (the write that crosses the mark writes nothing). Without
 * MFT_IO_FAULT_AFTER nothing fails, and the rank's byte count is appended to
 * the file MFT_IO_FAULT_REPORT at exit: where a later fault may be placed. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static long long written = 0;

static const char *process_rank(void) {
  const char *names[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
    if (getenv(names[i])) return getenv(names[i]);
  return "0";
}

static int this_rank(void) {
  const char *rank = getenv("MFT_IO_FAULT_RANK");
  return getenv("MFT_IO_FAULT_FILE") && (!rank || strcmp(rank, process_rank()) == 0);
}

static int watched(int fd) {
  if (!this_rank()) return 0;
  char link[64], path[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, path, sizeof path - 1);
  if (n < 0) return 0;
  path[n] = '\0';
  return strstr(path, getenv("MFT_IO_FAULT_FILE")) != NULL;
}

/* 1 when this write must fail (errno set), 0 when it goes ahead. */
static int fails(int fd, size_t bytes) {
  if (!watched(fd)) return 0;
  const char *after = getenv("MFT_IO_FAULT_AFTER");
  if (after && written + (long long)bytes > atoll(after)) {
    errno = ENOSPC;
    return 1;
  }
  written += (long long)bytes;
  return 0;
}

static size_t total(const struct iovec *v, int count) {
  size_t sum = 0;
  for (int i = 0; i < count; ++i) sum += v[i].iov_len;
  return sum;
}

__attribute__((destructor)) static void report(void) {
  const char *file = getenv("MFT_IO_FAULT_REPORT");
  if (!file || getenv("MFT_IO_FAULT_AFTER") || !this_rank()) return;
  FILE *out = fopen(file, "a");
  if (!out) return;
  fprintf(out, "%s %lld\n", process_rank(), written);
  fclose(out);
}

#define REAL(name) \
  static __typeof__(name) *real; \
  if (!real) real = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

ssize_t write(int fd, const void *buf, size_t n) {
  REAL(write);
  return fails(fd, n) ? -1 : real(fd, buf, n);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t offset) {
  REAL(pwrite);
  return fails(fd, n) ? -1 : real(fd, buf, n, offset);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t offset) {
  REAL(pwrite64);
  return fails(fd, n) ? -1 : real(fd, buf, n, offset);
}

ssize_t writev(int fd, const struct iovec *v, int count) {
  REAL(writev);
  return fails(fd, total(v, count)) ? -1 : real(fd, v, count);
}

ssize_t pwritev(int fd, const struct iovec *v, int count, off_t offset) {
  REAL(pwritev);
  return fails(fd, total(v, count)) ? -1 : real(fd, v, count, offset);
}

ssize_t pwritev64(int fd, const struct iovec *v, int count, off_t offset) {
  REAL(pwritev64);
  return fails(fd, total(v, count)) ? -1 : real(fd, v, count, offset);
}
