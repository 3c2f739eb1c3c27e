// Tests on eight bytes at a time, for the scanners that check every byte of a per-request text
// (a URL, a record's key, a JSON string, a header field): the "hasless" and "haszero" word
// tests of Sean Anderson's "Bit Twiddling Hacks" (public domain). Each answers yes or no for a
// whole word exactly; it does not say which byte matched (a borrow may also mark a byte above
// the first match). Pure; any thread.
#pragma once

#include <cstdint>
#include <cstring>

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

}  // namespace hammer::word_bytes
