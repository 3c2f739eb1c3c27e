#include "hammer/stats/key_order.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace hammer::stats {

namespace {

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
    while (i < n && first[i] == key[i])
      ++i;
    common = i;
  }
  return common;
}

// The 8 bytes of `key` from `offset` (at most its size) as a big-endian integer, zeros past the
// key's end. Two keys that share their first `offset` bytes compare as their words do when the
// words differ: the first byte that differs decides both (as unsigned), and a key that ends
// first has zeros where the other has bytes, so it is the smaller or the words are equal.
uint64_t WordAt(std::string_view key, size_t offset) {
  unsigned char bytes[8] = {};
  std::memcpy(bytes, key.data() + offset, std::min<size_t>(8, key.size() - offset));
  uint64_t word = 0;
  for (unsigned char byte : bytes)
    word = word << 8 | byte;
  return word;
}

}  // namespace

std::vector<size_t> SortedKeyOrder(std::span<const std::string_view> keys) {
  struct Entry {
    uint64_t word;
    size_t index;
  };
  const size_t common = CommonPrefix(keys);
  std::vector<Entry> entries(keys.size());
  for (size_t i = 0; i < keys.size(); ++i)
    entries[i] = {WordAt(keys[i], common), i};
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.word < b.word; });
  // Keys with equal words (equal up to 8 bytes past the common prefix) are compared whole.
  for (auto run = entries.begin(); run != entries.end();) {
    const auto end = std::find_if(run + 1, entries.end(),
                                  [&run](const Entry& e) { return e.word != run->word; });
    if (end - run > 1) {
      std::sort(run, end,
                [keys](const Entry& a, const Entry& b) { return keys[a.index] < keys[b.index]; });
    }
    run = end;
  }
  std::vector<size_t> order(entries.size());
  for (size_t i = 0; i < entries.size(); ++i)
    order[i] = entries[i].index;
  return order;
}

}  // namespace hammer::stats
