#include "hammer/base/open_file_limit.h"

#include <sys/resource.h>

#include <cstdio>

namespace hammer {

namespace {

uint64_t Value(rlim_t limit) {
  return limit == RLIM_INFINITY ? UINT64_MAX : static_cast<uint64_t>(limit);
}

// fs.nr_open: the most descriptors one process may have, whatever RLIMIT_NOFILE says.
rlim_t KernelMaximum() {
  rlim_t maximum = 1 << 20;  // the kernel's default for fs.nr_open
  if (FILE* f = std::fopen("/proc/sys/fs/nr_open", "r")) {
    unsigned long long value = 0;
    if (std::fscanf(f, "%llu", &value) == 1 && value > 0) maximum = static_cast<rlim_t>(value);
    std::fclose(f);
  }
  return maximum;
}

}  // namespace

OpenFileLimit CurrentOpenFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return {};
  return {Value(limit.rlim_cur), Value(limit.rlim_max)};
}

OpenFileLimit RaiseOpenFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return {};
  rlim_t target = limit.rlim_max == RLIM_INFINITY ? KernelMaximum() : limit.rlim_max;
  if (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur >= target) return CurrentOpenFileLimit();
  rlimit raised = limit;
  raised.rlim_cur = target;
  setrlimit(RLIMIT_NOFILE, &raised);  // refused (a hardened kernel): keep what we have
  return CurrentOpenFileLimit();
}

}  // namespace hammer
