#include "hammer/load/target_line.h"

#include "hammer/base/strings.h"

namespace hammer::load {

namespace {

// TrimOws, and a CR among the trailing blanks goes too (a line of a file with CRLF endings).
std::string_view Trim(std::string_view s) {
  return TrimOws(s.substr(0, s.find_last_not_of(" \t\r") + 1));
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
  size_t space = FindFirstOf(line, " \t");
  if (space != std::string_view::npos && LooksLikeMethod(line.substr(0, space))) {
    result.method = line.substr(0, space);
    line = Trim(line.substr(space + 1));
  }
  result.url = line;
  return result;
}

}  // namespace hammer::load
