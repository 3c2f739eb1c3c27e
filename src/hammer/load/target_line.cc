#include "hammer/load/target_line.h"

namespace hammer::load {

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

}  // namespace

bool LooksLikeMethod(std::string_view word) {
  if (word.empty() || word.size() > 16) return false;
  for (char c : word) {
    if (c < 'A' || c > 'Z') return false;
  }
  return true;
}

TargetLine ParseTargetLine(std::string_view line) {
  TargetLine result;
  // Hadoop's "OFFSET<TAB>" prefix (any input format other than TextInputFormat).
  size_t digits = 0;
  while (digits < line.size() && line[digits] >= '0' && line[digits] <= '9')
    ++digits;
  if (digits > 0 && digits < line.size() && line[digits] == '\t') line.remove_prefix(digits + 1);

  line = Trim(line);
  if (line.empty() || line.front() == '#') return result;
  result.kind = TargetLine::Kind::kRequest;
  result.method = "GET";
  size_t space = line.find_first_of(" \t");
  if (space != std::string_view::npos && LooksLikeMethod(line.substr(0, space))) {
    result.method = line.substr(0, space);
    line = Trim(line.substr(space + 1));
  }
  result.url = line;
  return result;
}

}  // namespace hammer::load
