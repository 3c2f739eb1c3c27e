// The process's open-file limit (RLIMIT_NOFILE). Every connection is a descriptor, so servers
// (`hammer serve`, `hammer dark`) and the load generator raise the soft limit to the hard limit
// before they start: many systems still start processes with a soft limit of 1024 while the
// hard limit allows far more, and a process may raise its own soft limit up to the hard one
// without privileges (getrlimit(2)).
//
// Thread-safe (the kernel serialises it); meant to be called once at start-up.
#pragma once

#include <cstdint>

namespace hammer {

struct OpenFileLimit {
  uint64_t soft = 0;  // what the process may open now
  uint64_t hard = 0;  // what it may raise `soft` to (RLIM_INFINITY reads as UINT64_MAX)
};

// Raises the soft limit to the hard limit and returns the limits now in force. When the hard
// limit is unlimited, the soft limit goes to the kernel's per-process maximum (fs.nr_open);
// when the kernel refuses, the limits are returned unchanged. Never fails.
OpenFileLimit RaiseOpenFileLimit();

// The limits in force, without changing them.
OpenFileLimit CurrentOpenFileLimit();

}  // namespace hammer
