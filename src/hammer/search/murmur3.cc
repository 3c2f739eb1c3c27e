#include "hammer/search/murmur3.h"

namespace hammer::search {
namespace {

// Constants of MurmurHash3_x86_32 as published with SMHasher.
constexpr uint32_t kC1 = 0xcc9e2d51;
constexpr uint32_t kC2 = 0x1b873593;

constexpr uint32_t RotateLeft(uint32_t x, int r) {
  return (x << r) | (x >> (32 - r));
}

uint32_t LoadLittleEndian32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

uint32_t ScrambleBlock(uint32_t k1) {
  k1 *= kC1;
  k1 = RotateLeft(k1, 15);
  return k1 * kC2;
}

uint32_t MixBlock(uint32_t h1, uint32_t k1) {
  h1 ^= ScrambleBlock(k1);
  h1 = RotateLeft(h1, 13);
  return h1 * 5 + 0xe6546b64;
}

// Folds the 1..3 trailing bytes (little-endian, like a partial block) and the length, then
// applies the finalisation mix so every input bit affects every output bit.
uint32_t Finalize(uint32_t h1, const uint8_t* tail, size_t tail_size, uint32_t length) {
  uint32_t k1 = 0;
  for (size_t i = tail_size; i > 0; --i)
    k1 = (k1 << 8) | tail[i - 1];
  if (tail_size > 0) h1 ^= ScrambleBlock(k1);
  h1 ^= length;
  h1 ^= h1 >> 16;
  h1 *= 0x85ebca6b;
  h1 ^= h1 >> 13;
  h1 *= 0xc2b2ae35;
  h1 ^= h1 >> 16;
  return h1;
}

}  // namespace

uint32_t Murmur3X86_32(std::span<const uint8_t> data, uint32_t seed) {
  uint32_t h1 = seed;
  const size_t block_bytes = data.size() & ~size_t{3};
  for (size_t i = 0; i < block_bytes; i += 4)
    h1 = MixBlock(h1, LoadLittleEndian32(&data[i]));
  return Finalize(h1, data.data() + block_bytes, data.size() - block_bytes,
                  static_cast<uint32_t>(data.size()));
}

void Murmur3X86_32Hasher::Update(std::span<const uint8_t> data) {
  total_length_ += static_cast<uint32_t>(data.size());
  size_t i = 0;
  if (pending_size_ > 0) {
    while (pending_size_ < 4 && i < data.size())
      pending_[pending_size_++] = data[i++];
    if (pending_size_ < 4) return;
    h1_ = MixBlock(h1_, LoadLittleEndian32(pending_));
    pending_size_ = 0;
  }
  for (; i + 4 <= data.size(); i += 4)
    h1_ = MixBlock(h1_, LoadLittleEndian32(&data[i]));
  while (i < data.size())
    pending_[pending_size_++] = data[i++];
}

uint32_t Murmur3X86_32Hasher::Finish() const {
  return Finalize(h1_, pending_, pending_size_, total_length_);
}

}  // namespace hammer::search
