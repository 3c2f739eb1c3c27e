#include "hammer/search/position_id.h"

#include "hammer/search/json_text.h"

namespace hammer::search {

std::string PositionId(std::string_view source, uint64_t line) {
  std::string id(source);
  id += ':';
  id += std::to_string(line);
  return id;
}

void AppendActionWithId(std::string* out, std::string_view action_line, std::string_view id) {
  // A valid action is {"<op>":{...}}: its operation name is one of four plain words, so the
  // second '{' of the line opens the metadata object.
  const size_t outer = action_line.find('{');
  const size_t metadata = action_line.find('{', outer + 1);
  const std::string_view rest = action_line.substr(metadata + 1);
  const bool empty = rest.find_first_not_of(" \t\r\n") == rest.find('}');
  out->append(action_line.substr(0, metadata + 1));
  out->append("\"_id\":");
  AppendJsonString(out, id);
  if (!empty) out->push_back(',');
  out->append(rest);
}

}  // namespace hammer::search
