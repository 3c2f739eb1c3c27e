#include "hammer/base/duration.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace hammer {

namespace {

// The length of one unit in nanoseconds; 0 for an unknown unit.
double UnitScale(std::string_view unit) {
  if (unit == "s") return kSecond;
  if (unit == "ms") return kMillisecond;
  if (unit == "us" || unit == "\xC2\xB5s") return kMicrosecond;
  if (unit == "ns") return 1;
  if (unit == "m" || unit == "min") return 60.0 * kSecond;
  if (unit == "h") return 3600.0 * kSecond;
  return 0;
}

}  // namespace

Result<Nanos> ParseDuration(std::string_view text) {
  auto invalid = [&text] {
    return Status::Error("invalid duration '" + std::string(text) +
                         "' (examples: 250ms, 10s, 1.5m, 1m30s, 1h2m)");
  };
  if (text.empty()) return invalid();
  // A sequence of NUMBER UNIT parts ("1h2m3.5s", as Go's time.ParseDuration and k6 read
  // them); a bare number alone is seconds.
  double nanos = 0;
  std::string_view rest = text;
  while (!rest.empty()) {
    size_t split = rest.find_first_not_of("0123456789.eE+-");
    std::string_view number = rest.substr(0, split);
    rest = split == std::string_view::npos ? std::string_view() : rest.substr(split);
    size_t unit_end = rest.find_first_of("0123456789.+-");
    std::string_view unit = rest.substr(0, unit_end);
    rest = unit_end == std::string_view::npos ? std::string_view() : rest.substr(unit_end);
    double value = 0;
    auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
    if (number.empty() || ec != std::errc() || end != number.data() + number.size() ||
        !std::isfinite(value) || value < 0) {
      return invalid();
    }
    double scale = unit.empty() && number.size() == text.size() ? kSecond : UnitScale(unit);
    if (scale == 0) {
      return Status::Error("invalid duration unit in '" + std::string(text) +
                           "' (use ns, us, ms, s, m or h, e.g. 1m30s)");
    }
    nanos += value * scale;
  }
  if (nanos > 9.0e18) return Status::Error("duration too long: '" + std::string(text) + "'");
  return static_cast<Nanos>(std::llround(nanos));
}

std::string FormatDuration(Nanos d) {
  // %.3g prints values that round to 1000 or more as "1e+03": such values move up a unit, and
  // seconds from 999.5 on are printed whole.
  const double v = static_cast<double>(d);
  char buf[32];
  if (v >= 999.5 * kSecond) {
    std::snprintf(buf, sizeof(buf), "%.0fs", v / kSecond);
  } else if (v >= 999.5 * kMillisecond) {
    std::snprintf(buf, sizeof(buf), "%.3gs", v / kSecond);
  } else if (v >= 999.5 * kMicrosecond) {
    std::snprintf(buf, sizeof(buf), "%.3gms", v / kMillisecond);
  } else {
    std::snprintf(buf, sizeof(buf), "%.3gus", v / kMicrosecond);
  }
  return buf;
}

}  // namespace hammer
