// Progress output that never blocks: text written while nobody reads the
// descriptor (a full pipe) returns at once, and arrives whole and in order
// once the reader comes back.
#include "mft/core/async_output.hpp"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <unistd.h>

namespace {

TEST(AsyncOutput, AFullPipeDoesNotBlockTheWriter) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::string expected;
  {
    mft::AsyncOutput output(fds[1], std::chrono::seconds(60));
    // 1 MiB, far beyond a pipe's buffer, before anyone reads: a blocking
    // writer would hang here (and ctest's timeout would fail the test).
    for (int i = 0; i < 16384; ++i) {
      const std::string line = "line " + std::to_string(i) + std::string(50, '.') + "\n";
      output.stream() << line << std::flush;
      expected += line;
    }
    // Now read it all back while the destructor drains the queue.
    std::string got;
    std::thread reader([&] {
      char buffer[65536];
      while (got.size() < expected.size()) {
        const ssize_t n = read(fds[0], buffer, sizeof buffer);
        if (n <= 0) break;
        got.append(buffer, static_cast<size_t>(n));
      }
    });
    reader.join();
    EXPECT_EQ(got.size(), expected.size());
    EXPECT_TRUE(got == expected) << "the text arrived out of order or altered";
  }
  close(fds[0]);
  close(fds[1]);
}

} // namespace
