// zstd-compressed line files (Zstandard, RFC 8878), through libzstd: ZstdFrameEncoder writes
// whole lines as independent frames, ZstdStreamDecoder reads any sequence of frames back.
//
// A file of concatenated frames is itself a valid zstd file (RFC 8878 §3.1: `zstdcat` decodes
// them one after the other). Frames are independent, so a writer that undoes a failed write
// (truncating its file back to the end of the previous frame) leaves a file that still decodes
// whole, and a file cut inside its last frame decodes completely up to that frame.
//
// Neither class is thread-safe; each is used by one thread at a time. Errors are libzstd's,
// named by ZSTD_getErrorName.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "hammer/base/status.h"

struct ZSTD_CCtx_s;
struct ZSTD_DCtx_s;

namespace hammer {

// The four bytes that begin every zstd frame (RFC 8878 §3.1.1), 0xFD2FB528 little-endian.
inline constexpr std::string_view kZstdMagic = "\x28\xB5\x2F\xFD";

class ZstdFrameEncoder {
 public:
  // `level`: zstd's compression level (1 fastest; libzstd's default is 3).
  explicit ZstdFrameEncoder(int level);
  ~ZstdFrameEncoder();
  ZstdFrameEncoder(const ZstdFrameEncoder&) = delete;
  ZstdFrameEncoder& operator=(const ZstdFrameEncoder&) = delete;

  // Appends to `out` one complete frame holding `bytes` (with a content checksum). Fails only
  // when libzstd cannot allocate.
  Status AppendFrame(std::string_view bytes, std::string& out);

 private:
  ZSTD_CCtx_s* context_;
  int level_;
};

class ZstdStreamDecoder {
 public:
  ZstdStreamDecoder();
  ~ZstdStreamDecoder();
  ZstdStreamDecoder(const ZstdStreamDecoder&) = delete;
  ZstdStreamDecoder& operator=(const ZstdStreamDecoder&) = delete;

  // Decodes from the front of *input (consuming what it used) into out[0, capacity) and
  // returns the bytes written there: 0 when *input is used up (or holds only part of a block)
  // before anything could be decoded. Errors: not zstd, corrupt, or a checksum mismatch.
  Result<size_t> Decode(std::string_view* input, char* out, size_t capacity);

  // Whether a frame has begun and not ended: at the end of the input, the input was cut.
  bool inside_frame() const { return inside_frame_; }
  // Forgets any frame begun, for decoding another input from its start.
  void Reset();

 private:
  ZSTD_DCtx_s* context_;
  bool inside_frame_ = false;
};

}  // namespace hammer
