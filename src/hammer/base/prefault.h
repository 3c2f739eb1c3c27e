// BackgroundPrefault: touches the memory pages of a buffer for writing on a thread of its own,
// while the caller does other work, so that the caller then writes there without a page fault
// every 4 KiB. Fresh anonymous memory takes a fault per page at its first write: about 2-3 µs
// each on the virtual machines hammer was measured on, so the 2 MB vector of a 10,000-row
// summary costs over a millisecond of faults. Linux's madvise(MADV_POPULATE_WRITE) (Linux 5.14
// and later) makes the whole range present in one call; where it is refused, a byte is written
// on each page.
//
// The range must be memory nothing else reads or writes until Wait() returns, and whose
// contents do not matter (a vector's reserved capacity): the fallback writes zeros. Buffers
// under kMinBytes are left alone (a thread costs about 50 µs to start), as is everything when
// no thread can be had. Threads: one owner.
#pragma once

#include <cstddef>
#include <thread>

namespace hammer {

class BackgroundPrefault {
 public:
  static constexpr size_t kMinBytes = 256 * 1024;

  BackgroundPrefault(void* data, size_t bytes);
  ~BackgroundPrefault() { Wait(); }
  BackgroundPrefault(const BackgroundPrefault&) = delete;
  BackgroundPrefault& operator=(const BackgroundPrefault&) = delete;

  // Returns once the pages are touched (at once when none are being touched).
  void Wait();

 private:
  std::thread thread_;
};

}  // namespace hammer
