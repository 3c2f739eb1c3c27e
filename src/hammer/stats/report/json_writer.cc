#include "hammer/stats/report/json_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

namespace hammer::stats {

JsonWriter::JsonWriter(std::string* out, bool pretty, int depth, bool continuing)
    : out_(out), pretty_(pretty), empty_(static_cast<size_t>(depth), !continuing) {}

namespace {

// ",\n" and indentation for up to kMaxIndent levels: a separator is one append.
constexpr size_t kMaxIndent = 32;
const std::string kSeparators = ",\n" + std::string(2 * kMaxIndent, ' ');

}  // namespace

void JsonWriter::Separate() {
  if (empty_.empty()) return;  // the top-level value
  const bool first = empty_.back();
  empty_.back() = false;
  if (!pretty_) {
    if (!first) out_->push_back(',');
    return;
  }
  // ",\n" + indentation, or "\n" + indentation for a container's first member.
  const size_t skip = first ? 1 : 0;
  const size_t indent = 2 * std::min(empty_.size(), kMaxIndent);
  out_->append(kSeparators, skip, 2 - skip + indent);
  if (empty_.size() > kMaxIndent) out_->append(2 * (empty_.size() - kMaxIndent), ' ');
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
    out_->append(kSeparators, 1, 1 + indent);
    if (empty_.size() > kMaxIndent) out_->append(2 * (empty_.size() - kMaxIndent), ' ');
  }
  out_->push_back(bracket);
}

void JsonWriter::Key(std::string_view name) {
  Separate();
  AppendString(name);
  out_->append(": ", pretty_ ? 2 : 1);
  after_key_ = true;
}

void JsonWriter::AppendString(std::string_view text) {
  // Printable ASCII other than '"' and '\\' is written as it is (URLs and keys, nearly always);
  // anything else takes nlohmann's escaping and UTF-8 replacement, so both agree byte for byte.
  for (char c : text) {
    if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') {
      out_->append(
          nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
      return;
    }
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
  out_->append(nlohmann::json(value).dump());
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
