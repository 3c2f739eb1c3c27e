// Shutdown and reload signals for long-running commands. BlockShutdownSignals() must run
// before any thread starts (threads inherit the mask), so SIGINT/SIGTERM (and SIGHUP, for a
// command that reloads on it) reach only the thread that waits for them with
// WaitForShutdownSignal.
#pragma once

#include <functional>

#include "hammer/base/clock.h"

namespace hammer {

// Blocks SIGINT and SIGTERM; with `reload`, SIGHUP as well (otherwise SIGHUP keeps its default
// action and ends the process).
void BlockShutdownSignals(bool reload = false);
// Waits up to `timeout` (forever when timeout < 0; 0: only takes one already pending) for
// SIGINT or SIGTERM. Returns the signal number, or 0 on timeout. With `on_reload`, each SIGHUP
// calls it (on this thread) and the wait goes on; SIGHUP must then have been blocked with
// BlockShutdownSignals(true).
int WaitForShutdownSignal(Nanos timeout, const std::function<void()>& on_reload = nullptr);

}  // namespace hammer
