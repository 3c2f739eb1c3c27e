// Small ASCII string helpers shared by the parsers: blanks around fields, comma-separated lists,
// ASCII lower case, and input quoted for error messages.
//
// "Blank" here is what HTTP calls optional whitespace (OWS, RFC 9110 §5.6.3): a space or a
// horizontal tab, nothing else (no CR, LF or Unicode spaces). The line-oriented inputs (target
// lists, --threshold, Set-Cookie attributes) use the same definition.
//
// Everything is pure, never fails and may be called from any thread. The string_view results
// point into the argument: they are valid as long as the text they view.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace hammer {

// True for a space or a horizontal tab (OWS).
constexpr bool IsOws(char c) {
  return c == ' ' || c == '\t';
}

// `s` without its leading and trailing spaces and tabs.
constexpr std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && IsOws(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && IsOws(s.back()))
    s.remove_suffix(1);
  return s;
}

// Calls `fn(item)` for each item of the comma-separated `list`, in order, each trimmed of
// spaces and tabs. Empty items ("a, ,b", a leading or trailing comma, an empty list) are
// skipped, as RFC 9110 §5.6.1 requires of a list's recipient.
template <typename Fn>
void ForEachListItem(std::string_view list, Fn&& fn) {
  while (true) {
    size_t comma = list.find(',');
    std::string_view item = TrimOws(list.substr(0, comma));
    if (!item.empty()) fn(item);
    if (comma == std::string_view::npos) return;
    list.remove_prefix(comma + 1);
  }
}

// The position of the first byte of `s` at or after `pos` that is one of `set`'s, or npos: what
// std::string_view::find_first_of returns, in one pass (libstdc++ calls memchr over `set` for
// every byte of `s`, which the per-request parsers feel).
constexpr size_t FindFirstOf(std::string_view s, std::string_view set, size_t pos = 0) {
  for (size_t i = pos; i < s.size(); ++i) {
    for (char c : set) {
      if (s[i] == c) return i;
    }
  }
  return std::string_view::npos;
}

// Whether the `n` bytes at `a` and at `b` are the same: memcmp(a, b, n) == 0, compared inline
// eight bytes at a time (the last word may overlap the one before) instead of through a call,
// for the short texts compared per request (an origin, a host, a method).
inline bool BytesEqual(const char* a, const char* b, size_t n) {
  if (n >= 8) {
    uint64_t x;
    uint64_t y;
    for (size_t i = 0; i + 8 < n; i += 8) {
      std::memcpy(&x, a + i, sizeof x);
      std::memcpy(&y, b + i, sizeof y);
      if (x != y) return false;
    }
    std::memcpy(&x, a + n - 8, sizeof x);
    std::memcpy(&y, b + n - 8, sizeof y);
    return x == y;
  }
  if (n >= 4) {
    uint32_t x[2];
    uint32_t y[2];
    std::memcpy(&x[0], a, 4);
    std::memcpy(&x[1], a + n - 4, 4);
    std::memcpy(&y[0], b, 4);
    std::memcpy(&y[1], b + n - 4, 4);
    return x[0] == y[0] && x[1] == y[1];
  }
  for (size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

// a == b, with BytesEqual.
inline bool SameText(std::string_view a, std::string_view b) {
  return a.size() == b.size() && BytesEqual(a.data(), b.data(), a.size());
}

// s.starts_with(prefix), with BytesEqual.
inline bool StartsWithText(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && BytesEqual(s.data(), prefix.data(), prefix.size());
}

// *out = text, as clear() and append(): no overlap handling, which std::string::assign does on
// every call. `text` must not view *out's bytes.
inline void AssignText(std::string* out, std::string_view text) {
  out->clear();
  out->append(text);
}

// 'A'..'Z' mapped to 'a'..'z'; every other byte unchanged (no locale).
constexpr char AsciiToLower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + ('a' - 'A')) : c;
}

// A copy of `s` with AsciiToLower applied to every byte.
std::string AsciiStrToLower(std::string_view s);

// Input text for an error message: in single quotes, control characters shown as '?', cut
// after 80 bytes with "..." so that one bad line cannot flood a terminal.
std::string QuoteInput(std::string_view text);

}  // namespace hammer
