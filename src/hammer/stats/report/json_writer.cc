#include "hammer/stats/report/json_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>

#include "hammer/base/word_bytes.h"

namespace hammer::stats {

JsonWriter::JsonWriter(std::string* out, bool pretty, int depth, bool continuing)
    : out_(out), pretty_(pretty), empty_(static_cast<size_t>(depth), !continuing) {}

namespace {

// ",\n" and indentation for up to kMaxIndent levels: a separator is one append.
constexpr size_t kMaxIndent = 32;
const std::string kSeparators = ",\n" + std::string(2 * kMaxIndent, ' ');

// Whether every byte of `text` is printable ASCII other than '"' and '\\': JSON's string
// syntax (RFC 8259, section 7) writes those as they are. Eight bytes at a time (word_bytes.h).
bool PlainAscii(std::string_view text) {
  using namespace word_bytes;
  return !AnyWord(text, 'a', [](uint64_t w) {
    return (HasHigh(w) | HasLess(w, 0x20) | HasByte(w, 0x7f) | HasByte(w, '"') |
            HasByte(w, '\\')) != 0;
  });
}

}  // namespace

std::string_view JsonWriter::Separator() {
  if (empty_.empty()) return {};  // the top-level value
  const bool first = empty_.back();
  empty_.back() = false;
  if (!pretty_) return first ? std::string_view() : std::string_view(",");
  // ",\n" + indentation, or "\n" + indentation for a container's first member.
  const size_t skip = first ? 1 : 0;
  const size_t indent = 2 * std::min(empty_.size(), kMaxIndent);
  return std::string_view(kSeparators).substr(skip, 2 - skip + indent);
}

void JsonWriter::Separate() {
  out_->append(Separator());
  if (pretty_ && empty_.size() > kMaxIndent) out_->append(2 * (empty_.size() - kMaxIndent), ' ');
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
  } else {
    Separate();
  }
}

void JsonWriter::Open(char bracket) {
  BeforeValue();
  out_->push_back(bracket);
  empty_.push_back(true);
}

void JsonWriter::Close(char bracket) {
  const bool empty = empty_.back();
  empty_.pop_back();
  // nlohmann prints an empty container as "{}" or "[]", a full one with its closing bracket on
  // a line of its own, at the container's indentation.
  if (pretty_ && !empty) {
    const size_t indent = 2 * std::min(empty_.size(), kMaxIndent);
    out_->append(kSeparators.data() + 1, 1 + indent);
    if (empty_.size() > kMaxIndent) out_->append(2 * (empty_.size() - kMaxIndent), ' ');
  }
  out_->push_back(bracket);
}

void JsonWriter::Key(const JsonName& name) {
  const std::string_view quoted = name.quoted(pretty_);
  if (empty_.size() > kMaxIndent) {  // deeper than kSeparators indents
    Separate();
    out_->append(quoted);
  } else {
    // Separator and quoted name in one append: a summary row writes a dozen names.
    const std::string_view separator = Separator();
    char text[2 + 2 * kMaxIndent + JsonName::kMaxSize + 4];
    char* end = std::copy(separator.begin(), separator.end(), text);
    end = std::copy(quoted.begin(), quoted.end(), end);
    out_->append(text, static_cast<size_t>(end - text));
  }
  after_key_ = true;
}

void JsonWriter::KeyText(std::string_view name) {
  Separate();
  AppendString(name);
  out_->append(": ", pretty_ ? 2 : 1);
  after_key_ = true;
}

void JsonWriter::AppendString(std::string_view text) {
  // Printable ASCII other than '"' and '\\' is written as it is (URLs and keys, nearly always);
  // anything else takes nlohmann's escaping and UTF-8 replacement, so both agree byte for byte.
  if (!PlainAscii(text)) {
    out_->append(
        nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    return;
  }
  // One resize and one copy: keys and member names are most of a summary's bytes.
  const size_t at = out_->size();
  out_->resize(at + text.size() + 2);
  char* quoted = out_->data() + at;
  quoted[0] = '"';
  std::memcpy(quoted + 1, text.data(), text.size());
  quoted[text.size() + 1] = '"';
}

void JsonWriter::String(std::string_view text) {
  BeforeValue();
  AppendString(text);
}

void JsonWriter::Uint(uint64_t value) {
  BeforeValue();
  const fmt::format_int digits(value);
  out_->append(digits.data(), digits.size());
}

void JsonWriter::Int(int64_t value) {
  BeforeValue();
  const fmt::format_int digits(value);
  out_->append(digits.data(), digits.size());
}

void JsonWriter::Double(double value) {
  BeforeValue();
  if (!std::isfinite(value)) {
    out_->append("null");
    return;
  }
  // An integral value below 10^15 is printed in fixed notation with ".0" (Grisu2's format
  // switches to an exponent from 10^15 on): the mean of a key with one request is one.
  if (std::fabs(value) < 1e15 && value == std::trunc(value) && !std::signbit(value)) {
    const fmt::format_int digits(static_cast<int64_t>(value));
    out_->append(digits.data(), digits.size());
    out_->append(".0");
    return;
  }
  // Otherwise what nlohmann's dump does for a finite double (serializer::dump_float): its
  // Grisu2 conversion, without building a json value and a string around it.
  char digits[64];
  const char* end = nlohmann::detail::to_chars(digits, digits + sizeof(digits), value);
  out_->append(digits, static_cast<size_t>(end - digits));
}

void JsonWriter::Bool(bool value) {
  BeforeValue();
  out_->append(value ? "true" : "false");
}

void JsonWriter::Null() {
  BeforeValue();
  out_->append("null");
}

}  // namespace hammer::stats
