#include "hammer/base/signals.h"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <cerrno>

namespace hammer {

namespace {

sigset_t ShutdownSet(bool reload) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  if (reload) sigaddset(&set, SIGHUP);
  return set;
}

}  // namespace

void BlockShutdownSignals(bool reload) {
  sigset_t set = ShutdownSet(reload);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int WaitForShutdownSignal(Nanos timeout, const std::function<void()>& on_reload) {
  sigset_t set = ShutdownSet(on_reload != nullptr);
  MonoNanos deadline = timeout < 0 ? 0 : MonoNow() + timeout;
  while (true) {
    int sig = 0;
    if (timeout < 0) {
      if (sigwait(&set, &sig) != 0) continue;
    } else {
      // A timeout of 0 still takes a signal already pending.
      Nanos left = std::max<Nanos>(0, deadline - MonoNow());
      timespec ts{static_cast<time_t>(left / kSecond), static_cast<long>(left % kSecond)};
      sig = sigtimedwait(&set, nullptr, &ts);
      if (sig < 0) {
        if (errno == EAGAIN) return 0;
        continue;  // EINTR
      }
    }
    if (sig == SIGHUP) {
      on_reload();
      continue;
    }
    return sig;
  }
}

}  // namespace hammer
