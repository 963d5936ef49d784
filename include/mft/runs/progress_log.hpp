#pragma once
// output.log: mft train's progress as JSON lines, for programs that watch a
// run (dashboards, workflow tools); the run file's /history stays the record.
// One object a line: "start" when the run starts (or restarts), "row" for
// each progress line mft prints, "end" when it ends (done, stopped, diverged
// or failed). Appended to, so a restarted run continues its log.
#include "mft/io/output_claim.hpp"

#include <cstdio>
#include <map>
#include <string>

namespace mft {

// Checks on rank 0, before anything is written (a dry run too), that
// `path` may be the log of a run whose run file and inputs are `files`
// (check_appended_output): InputError `output.log = PATH: why`. A log named
// by a restarted file (`received`, not by the user) must be new, empty or
// an mft log already: a received file never chooses what its restart
// appends to.
void check_progress_log(const std::string &path, const InputFiles &files, bool received = false);

class ProgressLog {
public:
  ProgressLog() = default;
  // Opens `path` for appending ("" or not rank 0: a log that writes nothing);
  // InputError when it is not a regular file by then.
  explicit ProgressLog(const std::string &path);
  ~ProgressLog();
  ProgressLog(const ProgressLog &) = delete;
  ProgressLog &operator=(const ProgressLog &) = delete;

  // One object {"event": EVENT, ...}: numbers (non-finite ones as null),
  // then texts, each in key order; flushed at once.
  void write(const std::string &event, const std::map<std::string, double> &numbers,
             const std::map<std::string, std::string> &texts = {});

private:
  std::string path_;
  std::FILE *file_ = nullptr;
};

} // namespace mft
