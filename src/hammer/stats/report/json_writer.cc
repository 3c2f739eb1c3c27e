#include "hammer/stats/report/json_writer.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>

#include "hammer/base/word_bytes.h"

namespace hammer::stats {

JsonWriter::JsonWriter(std::string* out, bool pretty, int depth, bool continuing)
    : out_(out), pretty_(pretty), empty_(static_cast<size_t>(depth), continuing ? '\0' : '\1') {}

namespace {

// Whether `text` is printed between quotes as it is: printable ASCII other than '"' and '\\'
// (JSON's string syntax, RFC 8259 section 7), as URLs and keys nearly always are. Eight bytes at
// a time (word_bytes.h).
bool IsPlainJsonText(std::string_view text) {
  using namespace word_bytes;
  return !AnyWord(text, 'a', [](uint64_t w) {
    return (HasHigh(w) | HasLess(w, 0x20) | HasByte(w, 0x7f) | HasByte(w, '"') |
            HasByte(w, '\\')) != 0;
  });
}

// The most bytes PrintJsonDouble prints (nlohmann's serializer gives its conversion as many).
constexpr size_t kMaxJsonDoubleBytes = 64;

// Prints `value` at `p` as nlohmann's dump does and returns the end of the text.
char* PrintJsonDouble(char* p, double value) {
  if (!std::isfinite(value)) return std::copy_n("null", 4, p);
  // An integral value below 10^15 is printed in fixed notation with ".0" (Grisu2's format
  // switches to an exponent from 10^15 on): the mean of a key with one request is one.
  if (std::fabs(value) < 1e15 && value == std::trunc(value) && !std::signbit(value)) {
    p = std::to_chars(p, p + 20, static_cast<int64_t>(value)).ptr;
    return std::copy_n(".0", 2, p);
  }
  // Otherwise what nlohmann's dump does for a finite double (serializer::dump_float): its
  // Grisu2 conversion, without building a json value and a string around it.
  return nlohmann::detail::to_chars(p, p + kMaxJsonDoubleBytes, value);
}

// Room made at a time past what a piece needs: a summary row's pieces then share one resize.
constexpr size_t kMinGrowth = 4096;

// Writes `n` spaces at `p`, with a copy of known size when n <= kIndentCopy (which `p` then
// needs room for).
template <size_t kIndentCopy>
char* Indent(char* p, size_t n) {
  static constexpr auto kSpaces = [] {
    std::array<char, kIndentCopy> spaces{};
    spaces.fill(' ');
    return spaces;
  }();
  if (n <= kIndentCopy) {
    std::memcpy(p, kSpaces.data(), kIndentCopy);
  } else {
    std::memset(p, ' ', n);
  }
  return p + n;
}

}  // namespace

void JsonWriter::Finish() {
  if (cur_ == nullptr) return;
  out_->resize(static_cast<size_t>(cur_ - out_->data()));
  cur_ = end_ = nullptr;
}

void JsonWriter::Grow(size_t bytes) {
  // After Finish, the text so far is *out_'s, whoever wrote it.
  const size_t size = cur_ == nullptr ? out_->size() : static_cast<size_t>(cur_ - out_->data());
  // The string's capacity first (a caller may have reserved it for the whole text), else at
  // least double, as appends would. The room is filled with zeros once, then overwritten.
  if (cur_ == nullptr || out_->size() - size < bytes) {
    const size_t needed = size + bytes;
    out_->resize(needed <= out_->capacity() ? out_->capacity()
                                            : std::max(needed + kMinGrowth, 2 * size));
  }
  cur_ = out_->data() + size;
  end_ = out_->data() + out_->size();
}

char* JsonWriter::PutSeparator(char* p) {
  if (empty_.empty()) return p;  // the top-level value
  const bool first = empty_.back() != '\0';
  empty_.back() = '\0';
  if (!first) *p++ = ',';
  if (!pretty_) return p;
  if (empty_.size() > one_line_from_) {
    if (!first) *p++ = ' ';
    return p;
  }
  // nlohmann's dump(2): each member or element on a line of its own, indented two spaces a
  // level.
  *p++ = '\n';
  return Indent<kIndentCopy>(p, 2 * empty_.size());
}

char* JsonWriter::BeginValue(size_t bytes) {
  char* p = Room(SeparatorBytes() + bytes);
  if (after_key_) {
    after_key_ = false;
    return p;
  }
  return PutSeparator(p);
}

void JsonWriter::Put(std::string_view text) {
  char* p = Room(text.size());
  std::memcpy(p, text.data(), text.size());
  Advance(p + text.size());
}

void JsonWriter::Open(char bracket) {
  char* p = BeginValue(1);
  *p++ = bracket;
  Advance(p);
  empty_.push_back('\1');
}

void JsonWriter::Close(char bracket) {
  const bool empty = empty_.back() != '\0';
  empty_.pop_back();
  char* p = Room(SeparatorBytes() + 1);
  // nlohmann prints an empty container as "{}" or "[]", a full one with its closing bracket on
  // a line of its own, at the container's indentation.
  if (pretty_ && !empty && empty_.size() < one_line_from_) {
    *p++ = '\n';
    p = Indent<kIndentCopy>(p, 2 * empty_.size());
  }
  *p++ = bracket;
  Advance(p);
}

void JsonWriter::Key(const JsonName& name) {
  // The separator, then all of the name's bytes (a copy of known size, the quoted name first);
  // the cursor stops after the quoted name.
  char* p = Room(SeparatorBytes() + JsonName::kBytes);
  p = PutSeparator(p);
  std::memcpy(p, name.bytes(), JsonName::kBytes);
  Advance(p + name.quoted(pretty_).size());
  after_key_ = true;
}

void JsonWriter::KeyText(std::string_view name) {
  Advance(PutSeparator(Room(SeparatorBytes())));
  AppendString(name);
  Put(pretty_ ? std::string_view(": ") : std::string_view(":"));
  after_key_ = true;
}

void JsonWriter::AppendString(std::string_view text) {
  // Printable ASCII other than '"' and '\\' is written as it is (URLs and keys, nearly always);
  // anything else takes nlohmann's escaping and UTF-8 replacement, so both agree byte for byte.
  if (!IsPlainJsonText(text)) {
    Put(nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    return;
  }
  char* p = Room(text.size() + 2);
  *p++ = '"';
  std::memcpy(p, text.data(), text.size());
  p += text.size();
  *p++ = '"';
  Advance(p);
}

void JsonWriter::String(std::string_view text) {
  Advance(BeginValue(0));
  AppendString(text);
}

void JsonWriter::Uint(uint64_t value) {
  char* p = BeginValue(20);  // 2^64 - 1 has 20 digits
  Advance(std::to_chars(p, p + 20, value).ptr);
}

void JsonWriter::Int(int64_t value) {
  char* p = BeginValue(20);  // -2^63 is a sign and 19 digits
  Advance(std::to_chars(p, p + 20, value).ptr);
}

void JsonWriter::Double(double value) {
  Advance(PrintJsonDouble(BeginValue(kMaxJsonDoubleBytes), value));
}

void JsonWriter::Bool(bool value) {
  char* p = BeginValue(5);
  Advance(value ? std::copy_n("true", 4, p) : std::copy_n("false", 5, p));
}

void JsonWriter::Null() {
  char* p = BeginValue(4);
  Advance(std::copy_n("null", 4, p));
}

}  // namespace hammer::stats
