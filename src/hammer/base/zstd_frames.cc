#include "hammer/base/zstd_frames.h"

#include <zstd.h>

namespace hammer {

ZstdFrameEncoder::ZstdFrameEncoder(int level) : context_(ZSTD_createCCtx()), level_(level) {}

ZstdFrameEncoder::~ZstdFrameEncoder() {
  ZSTD_freeCCtx(context_);
}

Status ZstdFrameEncoder::AppendFrame(std::string_view bytes, std::string& out) {
  if (context_ == nullptr) return Status::Error("zstd: cannot allocate a compression context");
  // Parameters are sticky: set again only because a failed call may have reset them.
  ZSTD_CCtx_setParameter(context_, ZSTD_c_compressionLevel, level_);
  ZSTD_CCtx_setParameter(context_, ZSTD_c_checksumFlag, 1);
  const size_t start = out.size();
  out.resize(start + ZSTD_compressBound(bytes.size()));
  const size_t n =
      ZSTD_compress2(context_, out.data() + start, out.size() - start, bytes.data(), bytes.size());
  if (ZSTD_isError(n)) {
    out.resize(start);
    return Status::Error(std::string("zstd: ") + ZSTD_getErrorName(n));
  }
  out.resize(start + n);
  return Status::Ok();
}

ZstdStreamDecoder::ZstdStreamDecoder() : context_(ZSTD_createDCtx()) {}

ZstdStreamDecoder::~ZstdStreamDecoder() {
  ZSTD_freeDCtx(context_);
}

void ZstdStreamDecoder::Reset() {
  ZSTD_DCtx_reset(context_, ZSTD_reset_session_only);
  inside_frame_ = false;
}

Result<size_t> ZstdStreamDecoder::Decode(std::string_view* input, char* out, size_t capacity) {
  if (context_ == nullptr) return Status::Error("zstd: cannot allocate a decompression context");
  ZSTD_inBuffer in{input->data(), input->size(), 0};
  ZSTD_outBuffer to{out, capacity, 0};
  // One call stops at the end of each frame: go on until something is decoded or no progress
  // is made. Inside a frame, libzstd may hold decoded bytes that did not fit last time: asked
  // even when no input is left.
  while (to.pos == 0 && (in.pos < in.size || inside_frame_)) {
    const size_t used = in.pos;
    const size_t hint = ZSTD_decompressStream(context_, &to, &in);
    if (ZSTD_isError(hint)) {
      Reset();
      return Status::Error(std::string("zstd: ") + ZSTD_getErrorName(hint));
    }
    inside_frame_ = hint != 0;
    if (to.pos == 0 && in.pos == used) break;  // needs more input
  }
  input->remove_prefix(in.pos);
  return to.pos;
}

}  // namespace hammer
