// MurmurHash3, x86 32-bit variant: the hash Elasticsearch and OpenSearch use to route documents.
//
// Why hand-written rather than a library: the engines route with Lucene's
// StringHelper.murmurhash3_x86_32 with seed 0 over the UTF-16LE code units of a Java String
// (see routing.h). Most packaged murmur libraries default to the x64 128-bit variant, a different
// seed, or hash UTF-8 bytes; any of those silently picks the wrong shard. Writing the ~40 lines
// of the public-domain algorithm (Austin Appleby, SMHasher) pins the exact variant, has no
// dependency, and lets the caller stream bytes without building a buffer. Constants and steps
// follow the SMHasher description of MurmurHash3_x86_32; no code was copied.
//
// Errors: none; every byte sequence has a hash.
// Ownership: functions read the span only during the call; the hasher owns its small state.
// Threads: Murmur3X86_32 is pure and reentrant. A Murmur3X86_32Hasher may be used by one thread
// at a time; distinct hashers are independent.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace hammer::search {

// Hashes `data` in one call. Blocks are read as little-endian 32-bit words on every host.
uint32_t Murmur3X86_32(std::span<const uint8_t> data, uint32_t seed = 0);

// The same hash, fed incrementally: Update() any number of times with spans of any length, then
// Finish(). The result equals Murmur3X86_32 of the concatenated input.
class Murmur3X86_32Hasher {
 public:
  explicit Murmur3X86_32Hasher(uint32_t seed = 0) : h1_(seed) {}

  void Update(std::span<const uint8_t> data);
  // Returns the hash of everything passed to Update(). Does not change the hasher, so more
  // Update() calls may follow (Finish() then covers the longer input).
  uint32_t Finish() const;

 private:
  uint32_t h1_;
  uint32_t total_length_ = 0;  // Java/Lucene pass the length as int; mod 2^32 is what mixes in.
  uint8_t pending_[4] = {};    // bytes of an incomplete 4-byte block
  size_t pending_size_ = 0;
};

}  // namespace hammer::search
