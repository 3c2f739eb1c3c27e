// BackgroundPrefault makes the pages of a fresh buffer present (mincore(2) says so) before the
// caller writes there; a buffer under kMinBytes is left as it is.
#include "hammer/base/prefault.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <vector>

namespace hammer {
namespace {

// Fresh anonymous memory: no page is present until it is touched.
class FreshMapping {
 public:
  explicit FreshMapping(size_t bytes) : bytes_(bytes) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    data_ = p == MAP_FAILED ? nullptr : static_cast<char*>(p);
  }
  ~FreshMapping() {
    if (data_ != nullptr) munmap(data_, bytes_);
  }
  FreshMapping(const FreshMapping&) = delete;
  FreshMapping& operator=(const FreshMapping&) = delete;
  char* data() const { return data_; }

  // How many of its pages are present.
  size_t PresentPages() const {
    const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> present((bytes_ + page - 1) / page);
    if (mincore(data_, bytes_, present.data()) != 0) return 0;
    size_t n = 0;
    for (unsigned char p : present)
      n += p & 1;
    return n;
  }

 private:
  size_t bytes_;
  char* data_;
};

TEST(BackgroundPrefaultTest, MakesTheWholePagesOfALargeBufferPresent) {
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t pages = 2 * BackgroundPrefault::kMinBytes / page;
  FreshMapping mapping(pages * page);
  ASSERT_NE(mapping.data(), nullptr);
  ASSERT_EQ(mapping.PresentPages(), 0u);
  {
    // From one byte into the first page: that page is not whole, the others are.
    BackgroundPrefault prefault(mapping.data() + 1, pages * page - 1);
    prefault.Wait();
    EXPECT_EQ(mapping.PresentPages(), pages - 1);
  }
  // The buffer is usable as ever.
  mapping.data()[pages * page - 1] = 'x';
  EXPECT_EQ(mapping.data()[pages * page - 1], 'x');
}

TEST(BackgroundPrefaultTest, LeavesSmallBuffersAlone) {
  FreshMapping mapping(BackgroundPrefault::kMinBytes);
  ASSERT_NE(mapping.data(), nullptr);
  BackgroundPrefault(mapping.data(), BackgroundPrefault::kMinBytes - 1).Wait();
  BackgroundPrefault(nullptr, 4 * BackgroundPrefault::kMinBytes).Wait();
  EXPECT_EQ(mapping.PresentPages(), 0u);
}

}  // namespace
}  // namespace hammer
