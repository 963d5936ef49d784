#include "mft/runs/progress_log.hpp"

#include "mft/core/error.hpp"
#include "mft/io/output_claim.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>

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

void check_progress_log(const std::string &path, const std::string &output) {
  if (path.empty()) return;
  const std::string key = "output.log";
  check_writable_folder(key, path);
  if (path == output || same_file(path, output))
    throw InputError(key_error(key, path, "is output.file; the log is a text file of its own"));
}

ProgressLog::ProgressLog(const std::string &path) {
  if (path.empty()) return;
  file_ = std::fopen(path.c_str(), "a");
  if (!file_) throw Error(key_error("output.log", path, std::string("cannot open it: ") + std::strerror(errno)));
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
  // A log that cannot be written is not worth stopping a run for.
  std::fputs(line.c_str(), file_);
  std::fflush(file_);
}

} // namespace mft
