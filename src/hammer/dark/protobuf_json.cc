#include "hammer/dark/protobuf_json.h"

#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <vector>

#include "hammer/base/base64.h"

namespace hammer::dark {
namespace {

bool ReadVarint(std::string_view& in, uint64_t* value) {
  uint64_t result = 0;
  for (int shift = 0; shift < 64 && !in.empty(); shift += 7) {
    const auto byte = static_cast<uint8_t>(in.front());
    in.remove_prefix(1);
    result |= uint64_t{byte & 0x7fu} << shift;
    if ((byte & 0x80u) == 0) {
      *value = result;
      return true;
    }
  }
  return false;  // cut short, or longer than ten bytes
}

uint64_t LittleEndian(std::string_view bytes) {
  uint64_t value = 0;
  for (size_t i = bytes.size(); i-- > 0;)
    value = value << 8 | static_cast<uint8_t>(bytes[i]);
  return value;
}

// Valid UTF-8 (no overlong forms, surrogates or values past U+10FFFF) without control
// characters other than tab, line feed and carriage return.
bool IsPrintableUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<uint8_t>(text[i]);
    if (c < 0x80) {
      if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) return false;
      ++i;
      continue;
    }
    size_t length = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
    if (length == 0 || c > 0xf4 || i + length > text.size()) return false;
    uint32_t code = c & (0xffu >> (length + 1));
    for (size_t k = 1; k < length; ++k) {
      const auto next = static_cast<uint8_t>(text[i + k]);
      if ((next & 0xc0u) != 0x80) return false;
      code = code << 6 | (next & 0x3fu);
    }
    if ((length == 3 && (code < 0x800 || (code >= 0xd800 && code <= 0xdfff))) ||
        (length == 4 && (code < 0x10000 || code > 0x10ffff))) {
      return false;
    }
    i += length;
  }
  return true;
}

void AppendJsonString(std::string& out, std::string_view text) {
  out.push_back('"');
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out.push_back(c);
    }
  }
  out.push_back('"');
}

class Reader {
 public:
  explicit Reader(ProtobufJsonLimits limits) : limits_(limits) {}

  // Appends the JSON of `message` at `depth`; false (with `out` left to be discarded) when the
  // bytes are not a message.
  bool Message(std::string_view message, size_t depth, std::string& out) {
    std::map<uint64_t, std::vector<std::string>> fields;  // rendered values by field number
    while (!message.empty()) {
      if (++records_ > limits_.max_fields) return false;
      uint64_t key = 0;
      if (!ReadVarint(message, &key)) return false;
      const uint64_t number = key >> 3;
      if (number == 0 || number > 536'870'911) return false;  // 1 to 2^29-1
      std::string value;
      switch (key & 7) {
        case 0: {
          uint64_t v = 0;
          if (!ReadVarint(message, &v)) return false;
          value = fmt::format("{}", v);
          break;
        }
        case 1:
          if (message.size() < 8) return false;
          value = fmt::format("{}", LittleEndian(message.substr(0, 8)));
          message.remove_prefix(8);
          break;
        case 5:
          if (message.size() < 4) return false;
          value = fmt::format("{}", LittleEndian(message.substr(0, 4)));
          message.remove_prefix(4);
          break;
        case 2: {
          uint64_t length = 0;
          if (!ReadVarint(message, &length) || length > message.size()) return false;
          Bytes(message.substr(0, length), depth + 1, value);
          message.remove_prefix(length);
          break;
        }
        default:
          return false;  // groups (3, 4) and the unassigned 6 and 7
      }
      fields[number].push_back(std::move(value));
    }
    out.push_back('{');
    bool first = true;
    for (auto& [number, values] : fields) {
      if (!first) out.push_back(',');
      first = false;
      fmt::format_to(std::back_inserter(out), "\"{}\":", number);
      if (values.size() == 1) {
        out += values.front();
        continue;
      }
      out.push_back('[');
      for (size_t i = 0; i < values.size(); ++i) {
        if (i > 0) out.push_back(',');
        out += values[i];
      }
      out.push_back(']');
    }
    out.push_back('}');
    return true;
  }

 private:
  void Bytes(std::string_view bytes, size_t depth, std::string& out) {
    const bool text = IsPrintableUtf8(bytes);
    if (!text && !bytes.empty() && depth < limits_.max_depth) {
      std::string nested;  // records read in a failed reading count too: the work is bounded
      if (Message(bytes, depth, nested)) {
        out = std::move(nested);
        return;
      }
    }
    if (text) {
      AppendJsonString(out, bytes);
    } else {
      out = "{\"bytes\":\"" + Base64Encode(bytes) + "\"}";
    }
  }

  ProtobufJsonLimits limits_;
  size_t records_ = 0;
};

}  // namespace

std::optional<std::string> ProtobufToJson(std::string_view message, ProtobufJsonLimits limits) {
  std::string out;
  if (!Reader(limits).Message(message, 0, out)) return std::nullopt;
  return out;
}

}  // namespace hammer::dark
