// EvictingRingBuffer against rest.li's TestEvictingCircularBuffer (github.com/linkedin/rest.li,
// r2-core tests) and against a transcription of rest.li's own get()/put() on random
// operation sequences.
#include "hammer/dark/evicting_ring_buffer.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace hammer::dark {
namespace {

constexpr Nanos kMs = kMillisecond;

EvictingRingBuffer<std::string> Buffer(size_t capacity = 5, Nanos ttl = 5 * kSecond) {
  Result<EvictingRingBuffer<std::string>> buffer =
      EvictingRingBuffer<std::string>::Create(capacity, ttl);
  EXPECT_TRUE(buffer.ok());
  return std::move(buffer).value();
}

std::string GetOrEmpty(EvictingRingBuffer<std::string>& buffer, MonoNanos now) {
  const std::string* value = buffer.Get(now);
  return value ? *value : std::string("<empty>");
}

TEST(EvictingRingBufferTest, PutGetRepeatInOrder) {
  auto buffer = Buffer();
  buffer.Put("a", 0);
  EXPECT_EQ(GetOrEmpty(buffer, 0), "a");
  EXPECT_EQ(GetOrEmpty(buffer, 0), "a");
  buffer.Put("b", 0);
  EXPECT_EQ(GetOrEmpty(buffer, 0), "b");
  EXPECT_EQ(GetOrEmpty(buffer, 0), "a");
  EXPECT_EQ(GetOrEmpty(buffer, 0), "b");
}

TEST(EvictingRingBufferTest, TtlPurge) {
  auto buffer = Buffer();
  buffer.Put("a", 0);
  EXPECT_EQ(GetOrEmpty(buffer, 0), "a");
  EXPECT_EQ(GetOrEmpty(buffer, 5000 * kMs), "a");  // now - put == ttl: still eligible
  EXPECT_EQ(buffer.Get(5001 * kMs), nullptr);      // rest.li: throws once 5001 ms have passed
  EXPECT_TRUE(buffer.empty());
}

TEST(EvictingRingBufferTest, SetTtlAfterCreateKeepsEntries) {
  auto buffer = Buffer();
  buffer.Put("a", 0);
  ASSERT_TRUE(buffer.SetTtl(9001 * kMs).ok());
  EXPECT_EQ(GetOrEmpty(buffer, 8000 * kMs), "a");
  EXPECT_EQ(buffer.Get(9002 * kMs), nullptr);
}

TEST(EvictingRingBufferTest, SetCapacityClears) {
  auto buffer = Buffer();
  buffer.Put("a", 0);
  ASSERT_TRUE(buffer.SetCapacity(9001).ok());
  EXPECT_EQ(buffer.capacity(), 9001u);
  EXPECT_EQ(buffer.Get(0), nullptr);
}

TEST(EvictingRingBufferTest, TtlAndCapacityBelowOneAreRejected) {
  EXPECT_FALSE(EvictingRingBuffer<int>::Create(0, kSecond).ok());
  EXPECT_FALSE(EvictingRingBuffer<int>::Create(5, 0).ok());
  EXPECT_FALSE(EvictingRingBuffer<int>::Create(5, -1).ok());
  auto buffer = Buffer();
  EXPECT_FALSE(buffer.SetTtl(0).ok());
  EXPECT_FALSE(buffer.SetCapacity(0).ok());
  EXPECT_EQ(buffer.capacity(), 5u);
  EXPECT_EQ(buffer.ttl(), 5 * kSecond);
}

TEST(EvictingRingBufferTest, OverwritesTheOldestWhenFull) {
  auto buffer = Buffer(3);
  for (std::string value : {"a", "b", "c", "d"})
    buffer.Put(value, 0);
  EXPECT_EQ(buffer.size(), 3u);
  // The reader is still at slot 0, which now holds "d"; then on round the ring.
  EXPECT_EQ(GetOrEmpty(buffer, 0), "d");
  EXPECT_EQ(GetOrEmpty(buffer, 0), "b");
  EXPECT_EQ(GetOrEmpty(buffer, 0), "c");
  EXPECT_EQ(GetOrEmpty(buffer, 0), "d");
}

TEST(EvictingRingBufferTest, ClearEmptiesAtOnce) {
  auto buffer = Buffer(10, INT64_MAX);
  for (int i = 0; i < 10; ++i)
    buffer.Put(std::to_string(i), 0);
  ASSERT_NE(buffer.Get(0), nullptr);
  buffer.Clear();
  EXPECT_EQ(buffer.Get(0), nullptr);
  buffer.Put("x", 1);
  EXPECT_EQ(GetOrEmpty(buffer, 1), "x");
}

TEST(EvictingRingBufferTest, ExpiredEntriesAreFreed) {
  auto buffer = EvictingRingBuffer<std::shared_ptr<int>>::Create(4, kSecond);
  ASSERT_TRUE(buffer.ok());
  auto request = std::make_shared<int>(1);
  buffer->Put(request, 0);
  EXPECT_EQ(request.use_count(), 2);
  EXPECT_EQ(buffer->Get(2 * kSecond), nullptr);
  EXPECT_EQ(request.use_count(), 1);
}

TEST(EvictingRingBufferTest, HugeCapacityAllocatesAsWritten) {
  auto buffer = Buffer(1'000'000, INT64_MAX);
  buffer.Put("a", 0);
  buffer.Put("b", 0);
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ(GetOrEmpty(buffer, 0), i % 2 == 0 ? "a" : "b");
  }
}

// rest.li's EvictingCircularBuffer, transcribed: get() scans capacity + 1 slots from the
// reader, evicting expired entries it meets.
class RestLiReference {
 public:
  RestLiReference(size_t capacity, Nanos ttl) : values_(capacity), times_(capacity), ttl_(ttl) {}
  void Put(int value, MonoNanos now) {
    values_[writer_] = value;
    times_[writer_] = now;
    writer_ = (writer_ + 1) % values_.size();
  }
  std::optional<int> Get(MonoNanos now) {
    for (size_t i = 0; i <= values_.size(); ++i) {
      size_t position = reader_;
      reader_ = (reader_ + 1) % values_.size();
      if (!values_[position]) continue;
      if (now - times_[position] > ttl_) {
        values_[position].reset();
      } else {
        return values_[position];
      }
    }
    return std::nullopt;
  }

 private:
  std::vector<std::optional<int>> values_;
  std::vector<MonoNanos> times_;
  Nanos ttl_;
  size_t reader_ = 0;
  size_t writer_ = 0;
};

TEST(EvictingRingBufferTest, SameSequenceAsRestLiOnRandomOperations) {
  std::mt19937_64 rng(123);
  for (int round = 0; round < 300; ++round) {
    size_t capacity = 1 + rng() % 8;
    Nanos ttl = static_cast<Nanos>(1 + rng() % 50);
    auto ours = EvictingRingBuffer<int>::Create(capacity, ttl);
    ASSERT_TRUE(ours.ok());
    RestLiReference reference(capacity, ttl);
    MonoNanos now = 0;
    int next = 0;
    for (int step = 0; step < 400; ++step) {
      uint64_t op = rng() % 10;
      if (op < 3) {
        ours->Put(next, now);
        reference.Put(next, now);
        ++next;
      } else if (op < 8) {
        const int* got = ours->Get(now);
        std::optional<int> expected = reference.Get(now);
        ASSERT_EQ(got != nullptr, expected.has_value()) << "round " << round << " step " << step;
        if (got) {
          ASSERT_EQ(*got, *expected) << "round " << round << " step " << step;
        }
      } else {
        now += static_cast<Nanos>(rng() % 20);
      }
    }
  }
}

}  // namespace
}  // namespace hammer::dark
