#include "hammer/search/cluster_flags.h"

#include <cctype>
#include <charconv>

namespace hammer::search {

Result<std::vector<http::Url>> ParseClusterUrls(std::string_view text) {
  std::vector<http::Url> urls;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (item.empty()) continue;
    Result<http::Url> url = http::ParseUrl(item);
    if (!url.ok()) return Status::Error("'" + std::string(item) + "': " + url.status().message());
    if (url->target != "/") {
      return Status::Error("'" + std::string(item) +
                           "': give the node's root URL (no path), e.g. http://127.0.0.1:9200");
    }
    urls.push_back(std::move(*url));
  }
  if (urls.empty()) return Status::Error("expected at least one URL");
  return urls;
}

Status CheckTargetName(std::string_view name) {
  if (name.empty()) return Status::Error("the index name is empty");
  if (name.find_first_of("*?,/\\ \"<>|#") != std::string_view::npos || name == "." ||
      name == ".." || name.front() == '_') {
    return Status::Error("'" + std::string(name) +
                         "' is not a single index or alias name (no wildcards, commas, slashes)");
  }
  return Status::Ok();
}

Status ApplyDocumentFlags(std::string_view op, InputOptions* input) {
  if (op == "create") {
    input->document_op = BulkOp::kCreate;
  } else if (op != "index") {
    return Status::Error("--op: expected index or create, got '" + std::string(op) + "'");
  }
  if (!input->id_field.empty()) input->format = InputFormat::kDocuments;
  if (!input->routing_field.empty() && input->id_field.empty()) {
    return Status::Error("--routing-field needs --id-field");
  }
  return Status::Ok();
}

Result<uint64_t> ParseByteSize(std::string_view text) {
  uint64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end == text.data()) {
    return Status::Error("expected a size like 5m or 1048576, got '" + std::string(text) + "'");
  }
  std::string unit(end, text.data() + text.size());
  for (char& c : unit)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (unit.ends_with("ib")) unit.resize(unit.size() - 2);
  if (unit.ends_with("b") && unit.size() > 0) unit.pop_back();
  uint64_t scale = 1;
  if (unit == "k") {
    scale = 1024;
  } else if (unit == "m") {
    scale = 1024 * 1024;
  } else if (unit == "g") {
    scale = 1024 * 1024 * 1024;
  } else if (!unit.empty()) {
    return Status::Error("unknown size unit in '" + std::string(text) + "'");
  }
  if (value > UINT64_MAX / scale)
    return Status::Error("size too large: '" + std::string(text) + "'");
  return value * scale;
}

}  // namespace hammer::search
