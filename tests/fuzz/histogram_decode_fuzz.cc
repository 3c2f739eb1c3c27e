// libFuzzer target: Histogram::DecodeCompressed and DecodeBase64 on arbitrary bytes. Decoding
// must never crash, leak or allocate past its bounds, and whatever it accepts must survive an
// encode/decode round trip unchanged. Each input is also deflated and wrapped in a valid
// compressed header, so that mutations reach the V2 header and payload parser instead of dying
// on zlib's checksum. Seed corpus: tests/fuzz/corpus/histogram_decode/ (compressed encodings,
// their base64 and their uncompressed form, from HdrHistogram Java).
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "hammer/stats/histogram.h"

namespace {

void CheckAccepted(const hammer::Result<hammer::stats::Histogram>& decoded) {
  if (!decoded.ok()) return;
  const hammer::stats::Histogram& h = *decoded;
  if (h.allocated_bytes() >
      hammer::stats::Histogram::kPageCount * hammer::stats::Histogram::kPageSize * 8) {
    std::abort();
  }
  hammer::Result<hammer::stats::Histogram> again =
      hammer::stats::Histogram::DecodeCompressed(h.EncodeCompressed());
  if (!again.ok() || !(*again == h)) std::abort();
  // Exercise the readers on whatever was accepted.
  (void)h.ValueAtPercentile(99.9);
  (void)h.Mean();
  (void)h.StdDev();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  CheckAccepted(hammer::stats::Histogram::DecodeCompressed(bytes));
  CheckAccepted(hammer::stats::Histogram::DecodeBase64(bytes));

  uLongf length = compressBound(static_cast<uLong>(size));
  std::string wrapped(8 + length, '\0');
  if (compress2(reinterpret_cast<Bytef*>(wrapped.data() + 8), &length, data,
                static_cast<uLong>(size), Z_BEST_SPEED) != Z_OK) {
    return 0;
  }
  const uint32_t header[2] = {0x1c849314, static_cast<uint32_t>(length)};
  for (int word = 0; word < 2; ++word) {
    for (int i = 0; i < 4; ++i)
      wrapped[static_cast<size_t>(4 * word + i)] = static_cast<char>(header[word] >> (24 - 8 * i));
  }
  wrapped.resize(8 + length);
  CheckAccepted(hammer::stats::Histogram::DecodeCompressed(wrapped));
  return 0;
}
