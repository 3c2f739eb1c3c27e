// The text JsonWriter::OneLineFrom(from) gives for a pretty document, written independently of
// the writer, from the document's tree: a container opened inside `from` or more containers on
// one line ({"a": 1, "b": [2, 3]}), the others as nlohmann's dump(2) prints them.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

namespace hammer::stats {

// `level`: the containers open around `j`.
inline std::string OneLineReference(const nlohmann::ordered_json& j, size_t level, size_t from) {
  using Json = nlohmann::ordered_json;
  auto dump = [](const Json& value) {
    return value.dump(-1, ' ', false, Json::error_handler_t::replace);
  };
  if (!j.is_structured() || j.empty()) return dump(j);
  const bool one_line = level >= from;
  const std::string inner(2 * (level + 1), ' ');
  std::string out(1, j.is_object() ? '{' : '[');
  bool first = true;
  for (auto member = j.begin(); member != j.end(); ++member) {
    if (!first) out += ",";
    if (one_line) {
      out += first ? "" : " ";
    } else {
      out += "\n" + inner;
    }
    first = false;
    if (j.is_object()) out += dump(Json(member.key())) + ": ";
    out += OneLineReference(member.value(), level + 1, from);
  }
  if (!one_line) out += "\n" + std::string(2 * level, ' ');
  out += j.is_object() ? '}' : ']';
  return out;
}

}  // namespace hammer::stats
