#include "hammer/base/byte_size.h"

#include <cctype>
#include <charconv>
#include <string>

namespace hammer {

Result<uint64_t> ParseByteSize(std::string_view text) {
  uint64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end == text.data()) {
    return Status::Error("expected a size like 5m or 1048576, got '" + std::string(text) + "'");
  }
  std::string unit(end, text.data() + text.size());
  for (char& c : unit)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (unit.ends_with("ib")) unit.resize(unit.size() - 2);
  if (unit.ends_with("b") && unit.size() > 0) unit.pop_back();
  uint64_t scale = 1;
  if (unit == "k") {
    scale = 1024;
  } else if (unit == "m") {
    scale = 1024 * 1024;
  } else if (unit == "g") {
    scale = 1024 * 1024 * 1024;
  } else if (!unit.empty()) {
    return Status::Error("unknown size unit in '" + std::string(text) + "'");
  }
  if (value > UINT64_MAX / scale)
    return Status::Error("size too large: '" + std::string(text) + "'");
  return value * scale;
}

std::string FormatByteSize(uint64_t bytes) {
  constexpr const char* kUnits[] = {"GiB", "MiB", "KiB"};
  for (int i = 0; i < 3; ++i) {
    const uint64_t scale = uint64_t{1} << (10 * (3 - i));
    if (bytes != 0 && bytes % scale == 0) return std::to_string(bytes / scale) + kUnits[i];
  }
  return std::to_string(bytes);
}

}  // namespace hammer
