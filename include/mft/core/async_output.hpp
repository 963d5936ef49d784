#pragma once
// Progress output that never blocks the computation. Text written to
// stream() goes, at each flush, to a queue that a thread of its own writes to
// a file descriptor. When nobody reads that descriptor (mpirun, shutting a
// job down, sleeps between SIGCONT, SIGTERM and SIGKILL without reading its
// ranks' output, and a rank blocked writing a progress line would never
// reach its stop snapshot), only the thread waits; the run goes on.
#include <chrono>
#include <memory>
#include <ostream>

namespace mft {

class AsyncOutput {
public:
  // Writes to `fd` (not owned). `grace`: how long the destructor waits for
  // the queue to drain before it leaves the text to the process's end.
  explicit AsyncOutput(int fd, std::chrono::milliseconds grace = std::chrono::seconds(2));
  ~AsyncOutput();
  AsyncOutput(const AsyncOutput &) = delete;
  AsyncOutput &operator=(const AsyncOutput &) = delete;

  std::ostream &stream();

private:
  struct Shared;
  class Buffer;
  std::shared_ptr<Shared> shared_; // also held by the writer thread
  std::unique_ptr<Buffer> buffer_;
  std::unique_ptr<std::ostream> stream_;
  std::chrono::milliseconds grace_;
};

} // namespace mft
