#include "hammer/load/target_line.h"

#include "hammer/base/strings.h"

namespace hammer::load {

namespace {

// TrimOws, and a CR among the trailing blanks goes too (a line of a file with CRLF endings).
// Byte tests instead of find_last_not_of, which calls memchr over " \t\r" for each byte.
std::string_view Trim(std::string_view s) {
  while (!s.empty() && (IsOws(s.back()) || s.back() == '\r'))
    s.remove_suffix(1);
  while (!s.empty() && IsOws(s.front()))
    s.remove_prefix(1);
  return s;
}

// A method (LooksLikeMethod): 1 to kMaxMethodLetters upper-case letters.
constexpr size_t kMaxMethodLetters = 16;
constexpr bool IsMethodLetter(char c) {
  return c >= 'A' && c <= 'Z';
}

// The length of the method that starts `line`, followed by a space or a tab (LooksLikeMethod of
// the text before the first blank); 0 when the line names none. Only the method's letters and
// the blank after them are read, not the URL behind them.
size_t MethodLength(std::string_view line) {
  size_t n = 0;
  while (n < line.size() && n <= kMaxMethodLetters && IsMethodLetter(line[n]))
    ++n;
  return n > 0 && n <= kMaxMethodLetters && n < line.size() && IsOws(line[n]) ? n : 0;
}

}  // namespace

bool LooksLikeMethod(std::string_view word) {
  if (word.empty() || word.size() > kMaxMethodLetters) return false;
  for (char c : word) {
    if (!IsMethodLetter(c)) return false;
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
  if (size_t space = MethodLength(line); space > 0) {
    result.method = line.substr(0, space);
    line = Trim(line.substr(space + 1));
  }
  result.url = line;
  return result;
}

}  // namespace hammer::load
