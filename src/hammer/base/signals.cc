#include "hammer/base/signals.h"

#include <pthread.h>
#include <signal.h>

#include <cerrno>

namespace hammer {

namespace {

sigset_t ShutdownSet() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

}  // namespace

void BlockShutdownSignals() {
  sigset_t set = ShutdownSet();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int WaitForShutdownSignal(Nanos timeout) {
  sigset_t set = ShutdownSet();
  MonoNanos deadline = timeout < 0 ? 0 : MonoNow() + timeout;
  while (true) {
    int sig;
    if (timeout < 0) {
      if (sigwait(&set, &sig) == 0) return sig;
      continue;
    }
    Nanos left = deadline - MonoNow();
    if (left <= 0) return 0;
    timespec ts{static_cast<time_t>(left / kSecond), static_cast<long>(left % kSecond)};
    int got = sigtimedwait(&set, nullptr, &ts);
    if (got > 0) return got;
    if (errno == EAGAIN) return 0;
  }
}

}  // namespace hammer
