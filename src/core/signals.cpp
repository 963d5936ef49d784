#include "mft/core/signals.hpp"

#include <csignal>
#include <string>

namespace mft {
namespace {

volatile std::sig_atomic_t g_signal = 0;
volatile std::sig_atomic_t g_starting = 1; // until a command's set-up ends

extern "C" void remember_signal(int signal) {
  // A second stop during start-up (MPI or a file system hanging there)
  // ends the process as the signal would: start-up has nothing to save.
  if (g_signal && g_starting) {
    std::signal(signal, SIG_DFL); // async-signal-safe, as is raise
    std::raise(signal);
    return;
  }
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

void restore_default_stop_handlers() {
  for (int s : {SIGTERM, SIGINT, SIGUSR1}) std::signal(s, SIG_DFL);
}

int stop_signal() { return static_cast<int>(g_signal); }

StoppedAtStartup::StoppedAtStartup(int signal)
    : std::runtime_error(std::string("stopped by ") + signal_name(signal) +
                         " during start-up, before anything was computed or written") {}

void end_startup_if_stopped(MPI_Comm comm) {
  g_starting = 0;
  int signal = stop_signal();
  MPI_Allreduce(MPI_IN_PLACE, &signal, 1, MPI_INT, MPI_MAX, comm);
  if (signal) throw StoppedAtStartup(signal);
}

const char *signal_name(int signal) {
  switch (signal) {
  case SIGTERM: return "SIGTERM";
  case SIGINT: return "SIGINT";
  case SIGUSR1: return "SIGUSR1";
  default: return "a signal";
  }
}

} // namespace mft
