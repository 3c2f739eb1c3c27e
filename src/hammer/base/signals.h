// Shutdown signals for long-running commands. BlockShutdownSignals() must run before any
// thread starts (threads inherit the mask), so SIGINT/SIGTERM reach only the thread that waits
// for them with WaitForShutdownSignal.
#pragma once

#include "hammer/base/clock.h"

namespace hammer {

void BlockShutdownSignals();
// Waits up to `timeout` (forever when timeout < 0). Returns the signal number, or 0 on timeout.
int WaitForShutdownSignal(Nanos timeout);

}  // namespace hammer
