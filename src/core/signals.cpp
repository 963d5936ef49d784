#include "mft/core/signals.hpp"

#include <csignal>

namespace mft {
namespace {

volatile std::sig_atomic_t g_signal = 0;

extern "C" void remember_signal(int signal) {
  if (!g_signal) g_signal = signal; // async-signal-safe: a flag, nothing else
}

} // namespace

void install_stop_handlers() {
  struct sigaction action {};
  action.sa_handler = remember_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (int s : {SIGTERM, SIGINT, SIGUSR1}) sigaction(s, &action, nullptr);
  // mpirun stops forwarding output while it shuts a job down: a progress
  // line written then must not kill the rank before its snapshot.
  std::signal(SIGPIPE, SIG_IGN);
}

int stop_signal() { return static_cast<int>(g_signal); }

const char *signal_name(int signal) {
  switch (signal) {
  case SIGTERM: return "SIGTERM";
  case SIGINT: return "SIGINT";
  case SIGUSR1: return "SIGUSR1";
  default: return "a signal";
  }
}

} // namespace mft
