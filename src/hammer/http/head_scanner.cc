#include "hammer/http/head_scanner.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "hammer/base/strings.h"
#include "hammer/base/word_bytes.h"

namespace hammer::http::internal {
namespace {

// Byte classes as 256-entry tables: one load per byte on the header-parsing path.
constexpr std::array<bool, 256> MakeTokenTable() {
  std::array<bool, 256> table{};
  for (int c = '0'; c <= '9'; ++c)
    table[c] = true;
  for (int c = 'a'; c <= 'z'; ++c)
    table[c] = true;
  for (int c = 'A'; c <= 'Z'; ++c)
    table[c] = true;
  for (char c : std::string_view("!#$%&'*+-.^_`|~"))
    table[static_cast<unsigned char>(c)] = true;
  return table;
}

// field-vchar / SP / HTAB, with obs-text (RFC 9110 §5.5).
constexpr std::array<bool, 256> MakeFieldValueTable() {
  std::array<bool, 256> table{};
  table['\t'] = true;
  for (int c = 0x20; c < 0x7f; ++c)
    table[c] = true;
  for (int c = 0x80; c <= 0xff; ++c)
    table[c] = true;
  return table;
}

constexpr std::array<bool, 256> kToken = MakeTokenTable();
constexpr std::array<bool, 256> kFieldValue = MakeFieldValueTable();

std::string_view StripCr(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

// Content-Length is 1*DIGIT. Identical values, repeated in one field ("5, 5") or in several,
// are accepted as RFC 9110 §8.6 allows; anything else (empty elements included) is an error,
// because disagreeing lengths are how requests are smuggled.
ParseError NoteContentLength(std::string_view value, FieldFacts* facts) {
  while (true) {
    size_t comma = value.find(',');
    std::string_view digits = TrimOws(value.substr(0, comma));
    if (digits.empty()) return ParseError::kBadContentLength;
    uint64_t n = 0;
    for (char c : digits) {
      if (c < '0' || c > '9') return ParseError::kBadContentLength;
      uint64_t digit = static_cast<uint64_t>(c - '0');
      if (n > (UINT64_MAX - digit) / 10) return ParseError::kBadContentLength;
      n = n * 10 + digit;
    }
    if (facts->has_content_length && facts->content_length != n) {
      return ParseError::kBadContentLength;
    }
    facts->has_content_length = true;
    facts->content_length = n;
    if (comma == std::string_view::npos) return ParseError::kNone;
    value.remove_prefix(comma + 1);
  }
}

// Several Transfer-Encoding fields form one list. Responses only care about its final
// coding; requests accept nothing but one "chunked", so the count and the form are kept too.
void NoteTransferEncoding(std::string_view value, FieldFacts* facts) {
  facts->has_transfer_encoding = true;
  uint32_t before = facts->transfer_codings;
  ForEachListItem(value, [&](std::string_view coding) {
    facts->chunked = EqualsIgnoreCase(coding, "chunked");
    ++facts->transfer_codings;
    if (!IsToken(coding)) facts->transfer_coding_malformed = true;
  });
  if (facts->transfer_codings == before) facts->transfer_coding_malformed = true;
}

// Host = uri-host [ ":" port ] (RFC 9110 §7.2): reg-name, IPv4 or a bracketed IP literal
// characters only. Anything that could smuggle a path, a user or a second value (SP, "/",
// "@", "?", "#", ",", "\\", control or non-ASCII bytes) makes the value invalid.
bool IsHostValue(std::string_view value) {
  for (char c : value) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              std::string_view("-._~!$&'()*+;=:[]%").find(c) != std::string_view::npos;
    if (!ok) return false;
  }
  return true;
}

void NoteHost(std::string_view value, FieldFacts* facts) {
  ++facts->host_fields;
  if (!IsHostValue(value)) facts->host_invalid = true;
}

void NoteConnection(std::string_view value, FieldFacts* facts) {
  ForEachListItem(value, [&](std::string_view option) {
    if (EqualsIgnoreCase(option, "close")) facts->connection_close = true;
    if (EqualsIgnoreCase(option, "keep-alive")) facts->connection_keep_alive = true;
  });
}

// Dispatches on the name's length first so most fields cost one switch and no comparison.
ParseError NoteField(const Header& h, FieldFacts* facts) {
  switch (h.name.size()) {
    case 4:
      if (EqualsIgnoreCase(h.name, "host")) NoteHost(h.value, facts);
      break;
    case 6:
      if (EqualsIgnoreCase(h.name, "expect") && EqualsIgnoreCase(h.value, "100-continue")) {
        facts->expect_continue = true;
      }
      break;
    case 10:
      if (EqualsIgnoreCase(h.name, "connection")) NoteConnection(h.value, facts);
      break;
    case 14:
      if (EqualsIgnoreCase(h.name, "content-length")) return NoteContentLength(h.value, facts);
      break;
    case 17:
      if (EqualsIgnoreCase(h.name, "transfer-encoding")) NoteTransferEncoding(h.value, facts);
      break;
    default:
      break;
  }
  return ParseError::kNone;
}

// Index of the first byte at or after `pos` that may not appear in field text (a control
// character other than HT; CR and LF included), or text.size(). Field values are most of a
// head's bytes, so this checks eight at a time and looks at single bytes only around a hit.
size_t SkipFieldText(std::string_view text, size_t pos) {
  using namespace word_bytes;
  while (true) {
    while (pos + 8 <= text.size()) {
      // Some byte below 0x20 or 0x7f (word_bytes.h); bytes from 0x80 up are field text.
      const uint64_t word = Load(text.data() + pos);
      if (HasLess(word, 0x20) | HasByte(word, 0x7f)) break;
      pos += 8;
    }
    size_t stop = std::min(pos + 8, text.size());
    while (pos < stop && kFieldValue[static_cast<unsigned char>(text[pos])])
      ++pos;
    if (pos < stop || pos == text.size()) return pos;  // else the hit was a HT: go on
  }
}

// Parses "name: value" at text[pos...] up to the first byte that is not field text. Returns
// that byte's index (text.size() if none), or npos if the name is not a token followed by ':'.
// An empty name also rejects obs-fold, a line starting with SP or HT.
size_t ScanField(std::string_view text, size_t pos, Header* header) {
  size_t name_start = pos;
  while (pos < text.size() && kToken[static_cast<unsigned char>(text[pos])])
    ++pos;
  if (pos == name_start || pos == text.size() || text[pos] != ':') return std::string_view::npos;
  size_t name_end = pos++;
  while (pos < text.size() && IsOws(text[pos]))
    ++pos;
  size_t value_start = pos;
  pos = SkipFieldText(text, pos);
  size_t value_end = pos;
  while (value_end > value_start && IsOws(text[value_end - 1]))
    --value_end;
  header->name = text.substr(name_start, name_end - name_start);
  header->value = text.substr(value_start, value_end - value_start);
  return pos;
}

}  // namespace

HeadScan ScanHead(std::string_view input, size_t max_head_bytes, size_t* scanned) {
  HeadScan scan;
  // Only the first max_head_bytes can hold an acceptable head; never scan past them.
  const size_t window = std::min(input.size(), max_head_bytes);
  const char* data = input.data();
  size_t pos = *scanned;
  size_t end = 0;
  while (pos < window) {
    const void* found = std::memchr(data + pos, '\n', window - pos);
    if (found == nullptr) {
      pos = window;
      break;
    }
    size_t nl = static_cast<size_t>(static_cast<const char*>(found) - data);
    // A head ends with an empty line: LF followed by LF or CRLF.
    if (nl + 1 < window && data[nl + 1] == '\n') {
      end = nl + 2;
    } else if (nl + 2 < window && data[nl + 1] == '\r' && data[nl + 2] == '\n') {
      end = nl + 3;
    } else if (nl + 2 >= window && (nl + 1 == window || data[nl + 1] == '\r')) {
      pos = nl;  // cannot tell yet: look at this LF again when more bytes arrive
      break;
    }
    if (end != 0) break;
    pos = nl + 1;
  }
  if (end == 0) {
    *scanned = pos;
    if (input.size() > max_head_bytes) scan.error = ParseError::kHeadTooLarge;
    return scan;
  }
  scan.length = end;
  size_t first_nl = input.find('\n');  // exists: the head ends with LF
  scan.start_line = StripCr(input.substr(0, first_nl));
  scan.field_lines = input.substr(first_nl + 1, end - first_nl - 1);
  return scan;
}

bool FieldFacts::KeepAlive(int minor_version) const {
  if (connection_close) return false;
  if (minor_version == 0) return connection_keep_alive && !has_transfer_encoding;
  return true;
}

// One pass over the field lines: each byte is looked at once, by the name or value scan,
// which also finds the line end.
ParseError ParseFieldLines(std::string_view field_lines, size_t max_headers,
                           std::vector<Header>* headers, FieldFacts* facts) {
  headers->clear();
  std::string_view text = field_lines;
  size_t pos = 0;
  while (true) {
    if (pos < text.size() && text[pos] == '\n') return ParseError::kNone;  // the empty line
    if (pos + 1 < text.size() && text[pos] == '\r' && text[pos + 1] == '\n') {
      return ParseError::kNone;
    }
    Header header;
    size_t end = ScanField(text, pos, &header);
    if (end >= text.size()) return ParseError::kBadHeader;
    if (text[end] == '\r' && end + 1 < text.size()) ++end;  // CRLF
    if (text[end] != '\n') return ParseError::kBadHeader;   // a control byte, or a bare CR
    pos = end + 1;
    if (headers->size() >= max_headers) return ParseError::kTooManyHeaders;
    headers->push_back(header);
    ParseError error = NoteField(header, facts);
    if (error != ParseError::kNone) return error;
  }
}

bool ParseFieldLine(std::string_view line, Header* header) {
  return ScanField(line, 0, header) == line.size();
}

ParseError ParseHttpVersion(std::string_view text, int* minor_version) {
  if (text.size() == 8 && text.substr(0, 7) == "HTTP/1." && (text[7] == '0' || text[7] == '1')) {
    *minor_version = text[7] - '0';
    return ParseError::kNone;
  }
  return text.starts_with("HTTP/") ? ParseError::kBadVersion : ParseError::kBadStartLine;
}

bool IsFieldText(std::string_view text) {
  return SkipFieldText(text, 0) == text.size();
}

bool IsToken(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!kToken[static_cast<unsigned char>(c)]) return false;
  }
  return true;
}

}  // namespace hammer::http::internal
