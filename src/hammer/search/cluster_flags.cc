#include "hammer/search/cluster_flags.h"

#include <cctype>
#include <charconv>

#include "hammer/base/worker_identity.h"

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

Status ApplyIdFromPosition(bool enabled, const std::string& input_path, InputOptions* input) {
  if (!enabled) return Status::Ok();
  if (input->from_route) {
    return Status::Error(
        "--id-from-position: not with --from-route (give it to 'hammer route', which reads the "
        "input in a stable order)");
  }
  const std::string split = DetectWorkerIdentity().input_split;
  input->position_source = split.empty() ? input_path : split;
  return Status::Ok();
}

}  // namespace hammer::search
