// Tests on eight bytes at a time, for the scanners that check every byte of a per-request text
// (a URL, a record's key, a JSON string, a header field): the "hasless" and "haszero" word
// tests of Sean Anderson's "Bit Twiddling Hacks" (public domain). Each answers yes or no for a
// whole word exactly; it does not say which byte matched (a borrow may also mark a byte above
// the first match). Pure; any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace hammer::word_bytes {

inline constexpr uint64_t kOnes = 0x0101010101010101;
inline constexpr uint64_t kHighBits = 0x8080808080808080;

// The eight bytes at `p`, in memory order (any alignment).
inline uint64_t Load(const char* p) {
  uint64_t word;
  std::memcpy(&word, p, sizeof word);
  return word;
}

// Nonzero when some byte of `word` is below `n` (n at most 128; a byte from 0x80 up never is).
constexpr uint64_t HasLess(uint64_t word, uint8_t n) {
  return (word - kOnes * n) & ~word & kHighBits;
}

// Nonzero when some byte of `word` is `byte`.
constexpr uint64_t HasByte(uint64_t word, uint8_t byte) {
  return HasLess(word ^ (kOnes * byte), 1);
}

// Nonzero when some byte of `word` is 0x80 or above.
constexpr uint64_t HasHigh(uint64_t word) {
  return word & kHighBits;
}

// Whether `test` (a predicate on a word) holds for some word of `text`: its whole words, then its
// last eight bytes (overlapping the word before), or, for a text shorter than eight bytes, those
// bytes padded with `pad`, a byte for which `test` must not hold. Stops at the first that holds.
template <typename Test>
bool AnyWord(std::string_view text, char pad, Test test) {
  const char* p = text.data();
  const size_t n = text.size();
  if (n < sizeof(uint64_t)) {
    uint64_t word = kOnes * static_cast<unsigned char>(pad);
    if (n > 0) std::memcpy(&word, p, n);
    return test(word);
  }
  for (size_t i = 0; i + sizeof(uint64_t) < n; i += sizeof(uint64_t)) {
    if (test(Load(p + i))) return true;
  }
  return test(Load(p + n - sizeof(uint64_t)));
}

}  // namespace hammer::word_bytes
