#include "hammer/base/prefault.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <system_error>

namespace hammer {

namespace {

#ifndef MADV_POPULATE_WRITE
// Linux 5.14's value (include/uapi/asm-generic/mman-common.h), for older C library headers.
constexpr int MADV_POPULATE_WRITE = 23;
#endif

// The whole pages inside [data, data + bytes), made present for writing.
void Prefault(char* data, size_t bytes) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + page - 1) & ~(page - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(page - 1);
  if (end <= begin) return;
  if (madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE) == 0) return;
  for (uintptr_t p = begin; p < end; p += page)
    *reinterpret_cast<volatile char*>(p) = 0;
}

}  // namespace

BackgroundPrefault::BackgroundPrefault(void* data, size_t bytes) {
  if (data == nullptr || bytes < kMinBytes) return;
  try {
    thread_ = std::thread(Prefault, static_cast<char*>(data), bytes);
  } catch (const std::system_error&) {  // no thread to be had: the caller takes the faults
  }
}

void BackgroundPrefault::Wait() {
  if (thread_.joinable()) thread_.join();
}

}  // namespace hammer
