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

// How many first bytes `a` and `b` share, at most `limit`, eight at a time; the bytes before
// `from` (at most the shorter's size and `limit`) are taken as shared, not compared.
size_t SharedPrefixLength(std::string_view a, std::string_view b, size_t from, size_t limit) {
  const size_t n = std::min({limit, a.size(), b.size()});
  size_t i = from;
  while (i + 8 <= n && std::memcmp(a.data() + i, b.data() + i, 8) == 0)
    i += 8;
  if (i + 8 <= n) {
    // The words differ: the first byte that does is the highest one in big-endian.
    return i + std::countl_zero(BigEndianWord(a.data() + i) ^ BigEndianWord(b.data() + i)) / 8;
  }
  while (i < n && a[i] == b[i])
    ++i;
  return i;
}

// The 8 bytes of `key` from `offset` (at most its size) as a big-endian integer, zeros past the
// key's end. Two keys that share their first `offset` bytes compare as their words do when the
// words differ: the first byte that differs decides both (as unsigned), and a key that ends
// first has zeros where the other has bytes, so it is the smaller or the words are equal.
uint64_t KeyWordAt(std::string_view key, size_t offset) {
  if (key.size() - offset >= 8) return BigEndianWord(key.data() + offset);
  char bytes[8] = {};
  if (key.size() > offset) std::memcpy(bytes, key.data() + offset, key.size() - offset);
  return BigEndianWord(bytes);
}

struct Entry {
  uint64_t word;
  size_t index;
};

// Sorts `run` by word. A comparison sort mispredicts a branch at about every other comparison,
// n log n times; a radix sort (least significant byte first, a stable counting sort per byte)
// reads and writes each entry once per byte, and skips the bytes that all the words share.
// Below kRadixMinEntries entries, zeroing and summing its counts costs more.
void SortByWord(std::span<Entry> run) {
  constexpr size_t kRadixMinEntries = 512;
  if (run.size() < kRadixMinEntries) {
    std::sort(run.begin(), run.end(),
              [](const Entry& a, const Entry& b) { return a.word < b.word; });
    return;
  }
  constexpr int kBytes = 8;
  std::array<std::array<size_t, 256>, kBytes> counts{};
  for (const Entry& entry : run) {
    for (int byte = 0; byte < kBytes; ++byte)
      ++counts[byte][(entry.word >> (8 * byte)) & 0xff];
  }
  std::vector<Entry> scratch(run.size());
  std::span<Entry> from = run;
  std::span<Entry> to = scratch;
  for (int byte = 0; byte < kBytes; ++byte) {
    std::array<size_t, 256>& next = counts[byte];  // each value's count, then its next slot
    if (next[(from.front().word >> (8 * byte)) & 0xff] == from.size()) continue;
    size_t slot = 0;
    for (size_t& count : next)
      slot += std::exchange(count, slot);
    for (const Entry& entry : from)
      to[next[(entry.word >> (8 * byte)) & 0xff]++] = entry;
    std::swap(from, to);
  }
  if (from.data() != run.data()) std::copy(from.begin(), from.end(), run.begin());
}

// Sorts `run` by comparing whole keys.
void SortWhole(std::span<const std::string_view> keys, std::span<Entry> run) {
  std::sort(run.begin(), run.end(),
            [keys](const Entry& a, const Entry& b) { return keys[a.index] < keys[b.index]; });
}

// Sorts `run` by key, whose keys have the same first `offset` bytes (and at least that many).
// The run's keys are sorted by their 8 bytes after the
// prefix they all share (often much longer than `offset`: the URLs of one host), and each set
// of keys whose 8 bytes tie is sorted so in turn, from after those bytes: keys of several hosts
// (or an "(other)" row, which shares no prefix with URLs) tie on their first words.
void SortByKey(std::span<const std::string_view> keys, std::span<Entry> run, size_t offset) {
  constexpr size_t kCompareWholeBelow = 32;
  if (run.size() < kCompareWholeBelow) {
    SortWhole(keys, run);
    return;
  }
  const std::string_view first = keys[run.front().index];
  size_t common = first.size();
  for (const Entry& entry : run.subspan(1))
    common = SharedPrefixLength(first, keys[entry.index], offset, common);
  for (Entry& entry : run)
    entry.word = KeyWordAt(keys[entry.index], common);
  SortByWord(run);
  for (auto tie = run.begin(); tie != run.end();) {
    const auto end =
        std::find_if(tie + 1, run.end(), [&tie](const Entry& e) { return e.word != tie->word; });
    const std::span<Entry> ties(tie, end);
    if (ties.size() > 1) {
      // Their bytes up to common + 8 are equal, unless one of them is shorter (zero padding).
      const bool longer = std::all_of(ties.begin(), ties.end(), [&](const Entry& e) {
        return keys[e.index].size() >= common + 8;
      });
      if (longer) {
        SortByKey(keys, ties, common + 8);
      } else {
        SortWhole(keys, ties);
      }
    }
    tie = end;
  }
}

}  // namespace

std::vector<size_t> SortedKeyOrder(std::span<const std::string_view> keys) {
  std::vector<Entry> entries(keys.size());
  for (size_t i = 0; i < keys.size(); ++i)
    entries[i].index = i;
  SortByKey(keys, entries, 0);
  std::vector<size_t> order(entries.size());
  for (size_t i = 0; i < entries.size(); ++i)
    order[i] = entries[i].index;
  return order;
}

}  // namespace hammer::stats
