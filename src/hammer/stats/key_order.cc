#include "hammer/stats/key_order.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <utility>

namespace hammer::stats {

namespace {

// The 8 bytes at `bytes` as an integer whose highest byte is the first.
uint64_t BigEndianWord(const char* bytes) {
  uint64_t word;
  std::memcpy(&word, bytes, sizeof(word));
  if constexpr (std::endian::native == std::endian::little) word = __builtin_bswap64(word);
  return word;
}

// The length of the longest prefix that every key starts with.
size_t CommonPrefix(std::span<const std::string_view> keys) {
  if (keys.empty()) return 0;
  const std::string_view first = keys.front();
  size_t common = first.size();
  for (std::string_view key : keys.subspan(1)) {
    const size_t n = std::min(common, key.size());
    size_t i = 0;
    while (i + 8 <= n && std::memcmp(first.data() + i, key.data() + i, 8) == 0)
      i += 8;
    if (i + 8 <= n) {
      // The words differ: the first byte that does is the highest one in big-endian.
      i += std::countl_zero(BigEndianWord(first.data() + i) ^ BigEndianWord(key.data() + i)) / 8;
    } else {
      while (i < n && first[i] == key[i])
        ++i;
    }
    common = i;
  }
  return common;
}

// The 8 bytes of `key` from `offset` (at most its size) as a big-endian integer, zeros past the
// key's end. Two keys that share their first `offset` bytes compare as their words do when the
// words differ: the first byte that differs decides both (as unsigned), and a key that ends
// first has zeros where the other has bytes, so it is the smaller or the words are equal.
uint64_t WordAt(std::string_view key, size_t offset) {
  if (key.size() - offset >= 8) return BigEndianWord(key.data() + offset);
  char bytes[8] = {};
  if (key.size() > offset) std::memcpy(bytes, key.data() + offset, key.size() - offset);
  return BigEndianWord(bytes);
}

struct Entry {
  uint64_t word;
  size_t index;
};

// Sorts `entries` by word. A comparison sort mispredicts a branch at about every other
// comparison, n log n times; a radix sort (least significant byte first, a stable counting
// sort per byte) reads and writes each entry once per byte, and skips the bytes that all the
// words share. Below kRadixMinEntries entries, zeroing and summing its counts costs more.
void SortByWord(std::vector<Entry>& entries) {
  constexpr size_t kRadixMinEntries = 512;
  if (entries.size() < kRadixMinEntries) {
    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return a.word < b.word; });
    return;
  }
  constexpr int kBytes = 8;
  std::array<std::array<size_t, 256>, kBytes> counts{};
  for (const Entry& entry : entries) {
    for (int byte = 0; byte < kBytes; ++byte)
      ++counts[byte][(entry.word >> (8 * byte)) & 0xff];
  }
  std::vector<Entry> sorted(entries.size());
  for (int byte = 0; byte < kBytes; ++byte) {
    std::array<size_t, 256>& next = counts[byte];  // each value's count, then its next slot
    if (next[(entries.front().word >> (8 * byte)) & 0xff] == entries.size()) continue;
    size_t slot = 0;
    for (size_t& count : next)
      slot += std::exchange(count, slot);
    for (const Entry& entry : entries)
      sorted[next[(entry.word >> (8 * byte)) & 0xff]++] = entry;
    entries.swap(sorted);
  }
}

}  // namespace

std::vector<size_t> SortedKeyOrder(std::span<const std::string_view> keys, bool* distinct) {
  const size_t common = CommonPrefix(keys);
  std::vector<Entry> entries(keys.size());
  for (size_t i = 0; i < keys.size(); ++i)
    entries[i] = {WordAt(keys[i], common), i};
  SortByWord(entries);
  // Keys with equal words (equal up to 8 bytes past the common prefix) are compared whole.
  bool all_distinct = true;
  for (auto run = entries.begin(); run != entries.end();) {
    const auto end = std::find_if(run + 1, entries.end(),
                                  [&run](const Entry& e) { return e.word != run->word; });
    if (end - run > 1) {
      std::sort(run, end,
                [keys](const Entry& a, const Entry& b) { return keys[a.index] < keys[b.index]; });
      for (auto entry = run + 1; entry != end && all_distinct; ++entry)
        all_distinct = keys[(entry - 1)->index] != keys[entry->index];
    }
    run = end;
  }
  if (distinct != nullptr) *distinct = all_distinct;
  std::vector<size_t> order(entries.size());
  for (size_t i = 0; i < entries.size(); ++i)
    order[i] = entries[i].index;
  return order;
}

}  // namespace hammer::stats
