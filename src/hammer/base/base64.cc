#include "hammer/base/base64.h"

#include <array>
#include <cstdint>
#include <cstring>

namespace hammer {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr uint8_t kInvalid = 0xff;

constexpr std::array<uint8_t, 256> MakeDecodeTable() {
  std::array<uint8_t, 256> table{};
  for (auto& entry : table)
    entry = kInvalid;
  for (uint8_t i = 0; i < 64; ++i)
    table[static_cast<uint8_t>(kAlphabet[i])] = i;
  return table;
}

constexpr std::array<uint8_t, 256> kDecodeTable = MakeDecodeTable();

// The two digits of every 12-bit value, for encoding (8 KiB).
constexpr std::array<std::array<char, 2>, 4096> MakeDigitPairs() {
  std::array<std::array<char, 2>, 4096> pairs{};
  for (size_t v = 0; v < pairs.size(); ++v)
    pairs[v] = {kAlphabet[v >> 6], kAlphabet[v & 63]};
  return pairs;
}

constexpr std::array<std::array<char, 2>, 4096> kDigitPairs = MakeDigitPairs();

}  // namespace

void AppendBase64(std::string& out, std::string_view bytes) {
  size_t start = out.size();
  out.resize(start + Base64EncodedSize(bytes.size()));
  char* dst = out.data() + start;
  const auto* src = reinterpret_cast<const uint8_t*>(bytes.data());
  size_t n = bytes.size();
  size_t i = 0;
  // Three bytes are two 12-bit halves, each two digits of kDigitPairs.
  for (; i + 3 <= n; i += 3) {
    const uint32_t group = (uint32_t{src[i]} << 16) | (uint32_t{src[i + 1]} << 8) | src[i + 2];
    std::memcpy(dst, kDigitPairs[group >> 12].data(), 2);
    std::memcpy(dst + 2, kDigitPairs[group & 0xFFF].data(), 2);
    dst += 4;
  }
  if (size_t rest = n - i; rest > 0) {
    uint32_t group = uint32_t{src[i]} << 16;
    if (rest == 2) group |= uint32_t{src[i + 1]} << 8;
    *dst++ = kAlphabet[(group >> 18) & 63];
    *dst++ = kAlphabet[(group >> 12) & 63];
    *dst++ = rest == 2 ? kAlphabet[(group >> 6) & 63] : '=';
    *dst++ = '=';
  }
}

std::string Base64Encode(std::string_view bytes) {
  std::string out;
  AppendBase64(out, bytes);
  return out;
}

Result<std::string> Base64Decode(std::string_view text) {
  if (text.size() % 4 != 0) return Status::Error("base64: length is not a multiple of 4");
  size_t padding = 0;
  if (!text.empty() && text.back() == '=') padding = text[text.size() - 2] == '=' ? 2 : 1;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    bool last = i + 4 == text.size();
    size_t data_chars = last ? 4 - padding : 4;
    uint32_t group = 0;
    for (size_t j = 0; j < 4; ++j) {
      uint8_t sextet = 0;
      if (j < data_chars) {
        sextet = kDecodeTable[static_cast<uint8_t>(text[i + j])];
        if (sextet == kInvalid) {
          return Status::Error("base64: invalid character at offset " + std::to_string(i + j));
        }
      }
      group = (group << 6) | sextet;
    }
    out.push_back(static_cast<char>(group >> 16));
    if (data_chars >= 3) out.push_back(static_cast<char>((group >> 8) & 0xff));
    if (data_chars == 4) out.push_back(static_cast<char>(group & 0xff));
    uint32_t unused_bits = data_chars == 2   ? (group & 0xffff)
                           : data_chars == 3 ? (group & 0xff)
                                             : 0;
    if (unused_bits != 0) return Status::Error("base64: non-zero padding bits");
  }
  return out;
}

}  // namespace hammer
