#include "hammer/stats/one_request_hint.h"

#include <cctype>
#include <cstdint>

#include "hammer/stats/key_table.h"

namespace hammer::stats {

std::string OneRequestRowsHint(std::span<const std::pair<std::string, KeyStats>> rows) {
  uint64_t keys = 0;
  uint64_t one_request = 0;
  for (const auto& [key, stats] : rows) {
    if (key == kOtherKey) continue;
    ++keys;
    if (stats.total() == 1) ++one_request;
  }
  return OneRequestRowsHint(keys, one_request);
}

std::string OneRequestRowsHint(uint64_t keys, uint64_t one_request) {
  if (one_request < kOneRequestHintRows || one_request * 10 < keys * 9) return "";
  const std::string count = std::to_string(keys);
  std::string text = one_request == keys ? "each of the " + count + " keys had one request"
                                         : std::to_string(one_request) + " of the " + count +
                                               " keys had one request each";
  text += ": group them into fewer rows with --key-pattern REGEX=NAME, or by path template with ";
  text += "--max-keys below " + count;
  return text;
}

std::string KeyRowsNote(const KeyFolding& folding, std::string_view one_request_hint) {
  std::string note;
  if (folding.folded) {
    note = folding.Describe() + " (raise " + std::string(folding.Limit()) + " for more rows).";
  } else if (!one_request_hint.empty()) {
    note = std::string(one_request_hint) + ".";
  }
  if (!note.empty()) note[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(note[0])));
  return note;
}

}  // namespace hammer::stats
