// libFuzzer target: DecodeWriteRequest and SnappyUncompress on arbitrary bytes. Decoding must
// never crash or read past its input; whatever it accepts must survive an encode/decode round
// trip, labels then sorted by name (as EncodeWriteRequest writes them) and values bit for bit.
// Seed corpus: tests/fuzz/corpus/remote_write/ (WriteRequests as EncodeWriteRequest writes
// them).
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "hammer/stats/remote_write_codec.h"

namespace {

using hammer::stats::RemoteWriteSample;

bool SameBits(const std::vector<RemoteWriteSample>& a, const std::vector<RemoteWriteSample>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].labels != b[i].labels || a[i].timestamp_ms != b[i].timestamp_ms ||
        std::bit_cast<uint64_t>(a[i].value) != std::bit_cast<uint64_t>(b[i].value)) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  (void)hammer::stats::SnappyUncompress(bytes, 1 << 16);
  hammer::Result<std::vector<RemoteWriteSample>> decoded = hammer::stats::DecodeWriteRequest(bytes);
  if (!decoded.ok()) return 0;
  std::vector<RemoteWriteSample> sorted = *decoded;
  for (RemoteWriteSample& sample : sorted) {
    std::stable_sort(sample.labels.begin(), sample.labels.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  hammer::Result<std::vector<RemoteWriteSample>> again =
      hammer::stats::DecodeWriteRequest(hammer::stats::EncodeWriteRequest(sorted));
  if (!again.ok() || !SameBits(*again, sorted)) std::abort();
  return 0;
}
