#include "mft/core/async_output.hpp"

#include <cerrno>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <streambuf>
#include <string>
#include <thread>
#include <unistd.h>

namespace mft {

// What the writer thread and the object share: the thread may outlive the
// object when its write never returns.
struct AsyncOutput::Shared {
  int fd = 1;
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::string> queue;
  bool writing = false; // the thread holds a chunk it has not finished
  bool closing = false;

  void run() {
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      changed.wait(lock, [&] { return closing || !queue.empty(); });
      if (queue.empty()) return; // closing, and everything written
      std::string chunk = std::move(queue.front());
      queue.pop_front();
      writing = true;
      lock.unlock();
      for (size_t done = 0; done < chunk.size();) {
        const ssize_t n = ::write(fd, chunk.data() + done, chunk.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break; // the reader is gone: the text is lost with it
        done += static_cast<size_t>(n);
      }
      lock.lock();
      writing = false;
      changed.notify_all();
    }
  }
};

// Collects text and hands it to the queue at every flush (std::flush,
// std::endl, and before the destructor).
class AsyncOutput::Buffer : public std::streambuf {
public:
  explicit Buffer(Shared &shared) : shared_(shared) {}

protected:
  int overflow(int c) override {
    if (c != traits_type::eof()) pending_.push_back(static_cast<char>(c));
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char *s, std::streamsize n) override {
    pending_.append(s, static_cast<size_t>(n));
    return n;
  }
  int sync() override {
    if (pending_.empty()) return 0;
    {
      std::lock_guard<std::mutex> lock(shared_.mutex);
      shared_.queue.push_back(std::move(pending_));
    }
    pending_.clear();
    shared_.changed.notify_all();
    return 0;
  }

private:
  Shared &shared_;
  std::string pending_;
};

AsyncOutput::AsyncOutput(int fd, std::chrono::milliseconds grace)
    : shared_(std::make_shared<Shared>()), grace_(grace) {
  shared_->fd = fd;
  buffer_ = std::make_unique<Buffer>(*shared_);
  stream_ = std::make_unique<std::ostream>(buffer_.get());
  std::thread([shared = shared_] { shared->run(); }).detach();
}

AsyncOutput::~AsyncOutput() {
  stream_->flush();
  std::unique_lock<std::mutex> lock(shared_->mutex);
  shared_->closing = true;
  shared_->changed.notify_all();
  // Drained within the grace time, or left to the process's end (the thread
  // keeps the shared state alive).
  shared_->changed.wait_for(lock, grace_, [&] { return shared_->queue.empty() && !shared_->writing; });
}

std::ostream &AsyncOutput::stream() { return *stream_; }

} // namespace mft
