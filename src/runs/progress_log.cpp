#include "mft/runs/progress_log.hpp"

#include "mft/core/error.hpp"
#include "mft/core/input_file.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace mft {
namespace {

std::string json_text(const std::string &s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char code[8];
      std::snprintf(code, sizeof code, "\\u%04x", c);
      out += code;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// The shortest text that reads back as v (to_chars), null if not finite.
std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  char text[32];
  const auto end = std::to_chars(text, text + sizeof text, v).ptr;
  return std::string(text, end);
}

} // namespace

void check_progress_log(const std::string &path, const InputFiles &files, bool received) {
  if (path.empty()) return;
  check_appended_output("output.log", path, files);
  if (!received) return;
  const std::string start = "{\"event\":"; // how every line of an mft log begins
  char head[16] = "";
  std::FILE *f = std::fopen(path.c_str(), "rb"); // a regular file (checked above): no blocking
  if (!f) return;                                // a new log
  const size_t got = std::fread(head, 1, start.size(), f);
  std::fclose(f);
  if (got > 0 && start.compare(0, got, head, got) != 0)
    throw InputError(key_error("output.log", path,
                               "named by the restarted file's /config, and it exists and is not an mft log; "
                               "give the log with --output.log"));
}

ProgressLog::ProgressLog(const std::string &path) : path_(path) {
  if (path.empty()) return;
  // Opened without blocking and checked on the descriptor: a FIFO put at the
  // path after the checks must not hang the run, nor a device take its text.
  const int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0666);
  if (fd < 0) throw Error(key_error("output.log", path, std::string("cannot open it: ") + std::strerror(errno)));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    throw InputError(key_error("output.log", path, "is " + file_kind(st.st_mode) + ", not a regular file"));
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  file_ = fdopen(fd, "a");
  if (!file_) {
    close(fd);
    throw Error(key_error("output.log", path, std::string("cannot open it: ") + std::strerror(errno)));
  }
}

ProgressLog::~ProgressLog() {
  if (file_) std::fclose(file_);
}

void ProgressLog::write(const std::string &event, const std::map<std::string, double> &numbers,
                        const std::map<std::string, std::string> &texts) {
  if (!file_) return;
  std::string line = "{\"event\": " + json_text(event);
  for (const auto &[key, value] : numbers) line += ", " + json_text(key) + ": " + json_number(value);
  for (const auto &[key, value] : texts) line += ", " + json_text(key) + ": " + json_text(value);
  line += "}\n";
  // A log that cannot be written is not worth stopping a run for: it says
  // so once, and the run file stays the record.
  errno = 0;
  if (std::fputs(line.c_str(), file_) < 0 || std::fflush(file_) != 0) {
    const std::string why = errno ? std::strerror(errno) : "unknown error";
    std::fprintf(stderr, "mft: warning: %s; the log stops here, the run goes on\n",
                 key_error("output.log", path_, "writing failed (" + why + ")").c_str());
    std::fclose(file_);
    file_ = nullptr;
  }
}

} // namespace mft
