// HashKey: the 64-bit hash of a key (a URL, most often) for KeyTable's rows and
// DistinctCounter's registers. Not seeded, as std::hash is not: keys come from the operator's
// own inputs (URL lists, records), never from a client. Never serialized: it may change between
// versions.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace hammer::stats {
namespace key_hash_detail {

// splitmix64's finalizer (Steele, Lea, Flood, "Fast splittable pseudorandom number
// generators", 2014): every input bit affects every output bit.
inline uint64_t Mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

inline uint64_t Word(const char* bytes) {
  uint64_t word;
  std::memcpy(&word, bytes, sizeof(word));
  return word;
}

}  // namespace key_hash_detail

// A key's 64-bit hash, inlined: a new key is hashed for its row (KeyTable) and for the distinct
// count (DistinctCounter), and std::hash (an out-of-line call, about 215 instructions for a
// 40-byte URL) cost a load run over distinct URLs about as much as templating the key. Eight
// bytes at a time, each word folded in by a multiply (odd: a bijection) and a rotation that
// brings its high bits down; the last word is the key's last eight bytes (overlapping the one
// before when the size is not a multiple of eight), then Mix spreads the bits.
inline uint64_t HashKey(std::string_view key) {
  constexpr uint64_t kOdd = 0x9e3779b97f4a7c15ULL;  // 2^64 / golden ratio, odd
  const char* bytes = key.data();
  const size_t size = key.size();
  uint64_t hash = size * kOdd;
  if (size >= sizeof(uint64_t)) {
    for (size_t i = 0; i + sizeof(uint64_t) < size; i += sizeof(uint64_t))
      hash = std::rotl((hash ^ key_hash_detail::Word(bytes + i)) * kOdd, 29);
    hash = std::rotl((hash ^ key_hash_detail::Word(bytes + size - sizeof(uint64_t))) * kOdd, 29);
  } else {
    for (size_t i = 0; i < size; ++i)
      hash = std::rotl((hash ^ static_cast<unsigned char>(bytes[i])) * kOdd, 29);
  }
  return key_hash_detail::Mix(hash);
}

}  // namespace hammer::stats
