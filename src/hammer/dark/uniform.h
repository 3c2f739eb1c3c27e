// Uniform numbers in [0, 1) for the fork strategies: drawn from a small seeded generator, or
// derived from a request key by a stable hash so that every hop (other proxies, other
// implementations) computes the same number for the same key.
//
// The key hash is specified exactly so that it can be reimplemented elsewhere: FNV-1a 64 over
// the key's bytes, then MurmurHash3's fmix64 finalizer (FNV-1a alone leaves its top bits poorly
// mixed for keys that differ only in their last bytes, e.g. sequential request ids), then the
// top 53 bits divided by 2^53. Pure functions; thread-safe. SplitMix64 is a value type with no
// synchronisation: one per owner.
#pragma once

#include <cstdint>
#include <string_view>

namespace hammer::dark {

// The top 53 bits of `bits` as a double in [0, 1); every result is exact.
constexpr double UniformFromBits(uint64_t bits) {
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

constexpr uint64_t Fnv1a64(std::string_view key) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (char c : key) {
    hash ^= static_cast<uint8_t>(c);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

// MurmurHash3's 64-bit finalizer: a bijection that spreads every input bit over the output.
constexpr uint64_t Fmix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

// The stable number of a request key (a header value such as a request id), in [0, 1).
constexpr double UniformFromKey(std::string_view key) {
  return UniformFromBits(Fmix64(Fnv1a64(key)));
}

// SplitMix64 (Steele, Lea, Flood 2014): 8 bytes of state, passes BigCrush; enough for
// sampling decisions and jitter, and cheap enough to keep one per dark cluster and thread.
class SplitMix64 {
 public:
  explicit constexpr SplitMix64(uint64_t seed) : state_(seed) {}
  constexpr uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  constexpr double NextUniform() { return UniformFromBits(Next()); }

 private:
  uint64_t state_;
};

}  // namespace hammer::dark
