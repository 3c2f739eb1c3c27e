#include "hammer/stats/one_request_hint.h"

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

}  // namespace hammer::stats
