#include "hammer/search/cluster_view.h"

#include <simdjson.h>

#include <algorithm>
#include <charconv>

namespace hammer::search {
namespace {

using simdjson::dom::element;
using simdjson::dom::object;

// Parses `body` with a parser of its own; `what` names the answer in errors.
class JsonDocument {
 public:
  JsonDocument(std::string_view body, std::string_view what) : what_(what) {
    padded_.assign(body);
    padded_.append(simdjson::SIMDJSON_PADDING, ' ');
    error_ = parser_.parse(padded_.data(), body.size(), false).get(root_);
  }
  Status status() const {
    if (error_ == simdjson::SUCCESS) return Status::Ok();
    return Status::Error(std::string(what_) + ": invalid JSON: " + simdjson::error_message(error_));
  }
  element root() const { return root_; }

 private:
  std::string_view what_;
  std::string padded_;
  simdjson::dom::parser parser_;
  element root_;
  simdjson::error_code error_;
};

std::optional<std::string_view> StringAt(element parent, std::string_view key) {
  std::string_view value;
  if (parent[key].get_string().get(value) != simdjson::SUCCESS) return std::nullopt;
  return value;
}

// A setting: the server writes numbers as strings ("6"); accept both.
std::optional<int64_t> IntValue(element value) {
  int64_t number = 0;
  if (value.get_int64().get(number) == simdjson::SUCCESS) return number;
  std::string_view text;
  if (value.get_string().get(text) != simdjson::SUCCESS) return std::nullopt;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return number;
}

// settings.index.<path> (nested), or settings["index.<path>"] (flat_settings).
std::optional<element> Setting(element settings, std::string_view dotted) {
  element flat;
  if (settings.at_key("index." + std::string(dotted)).get(flat) == simdjson::SUCCESS) return flat;
  element current;
  if (settings.at_key("index").get(current) != simdjson::SUCCESS) return std::nullopt;
  while (!dotted.empty()) {
    const size_t dot = dotted.find('.');
    element next;
    if (current.at_key(dotted.substr(0, dot)).get(next) != simdjson::SUCCESS) return std::nullopt;
    current = next;
    dotted = dot == std::string_view::npos ? std::string_view() : dotted.substr(dot + 1);
  }
  return current;
}

Result<int32_t> IntSetting(element settings, std::string_view name, std::string_view index,
                           std::optional<int32_t> fallback) {
  std::optional<element> value = Setting(settings, name);
  if (!value) {
    if (fallback) return *fallback;
    return Status::Error("index " + std::string(index) + " has no setting index." +
                         std::string(name));
  }
  std::optional<int64_t> number = IntValue(*value);
  if (!number || *number < 0 || *number > INT32_MAX) {
    return Status::Error("index " + std::string(index) + ": index." + std::string(name) +
                         " is not a non-negative int32");
  }
  return static_cast<int32_t>(*number);
}

}  // namespace

int ClusterView::PrimaryNodeIndex(int32_t shard) const {
  if (shard < 0 || static_cast<size_t>(shard) >= primary_node_ids.size()) return -1;
  const std::string& id = primary_node_ids[static_cast<size_t>(shard)];
  return id.empty() ? -1 : NodeIndexById(id);
}

int ClusterView::NodeIndexById(std::string_view id) const {
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].id == id) return static_cast<int>(i);
  }
  return -1;
}

Result<ServerInfo> ParseServerInfo(std::string_view body) {
  JsonDocument json(body, "GET /");
  if (!json.status().ok()) return json.status();
  element version;
  if (json.root()["version"].get(version) != simdjson::SUCCESS) {
    return Status::Error("GET /: no version object (is this Elasticsearch or OpenSearch?)");
  }
  Result<SearchDistribution> distribution =
      DistributionFromVersionInfo(StringAt(version, "distribution"));
  if (!distribution.ok()) return Status::Error("GET /: " + distribution.status().message());
  ServerInfo info;
  info.distribution = *distribution;
  info.version = std::string(StringAt(version, "number").value_or(""));
  return info;
}

Result<IndexTarget> ParseAliasTarget(std::string_view body, std::string_view target) {
  JsonDocument json(body, "GET _alias");
  if (!json.status().ok()) return json.status();
  object indices;
  if (json.root().get_object().get(indices) != simdjson::SUCCESS) {
    return Status::Error("GET _alias: not an object");
  }
  std::vector<IndexTarget> candidates;
  std::optional<IndexTarget> write_index;
  for (simdjson::dom::key_value_pair entry : indices) {
    element alias;
    if (entry.value["aliases"].at_key(target).get(alias) != simdjson::SUCCESS) continue;
    IndexTarget candidate;
    candidate.index = std::string(entry.key);
    candidate.is_alias = true;
    if (std::optional<std::string_view> routing = StringAt(alias, "index_routing")) {
      candidate.index_routing = std::string(*routing);
    }
    bool is_write = false;
    if (alias["is_write_index"].get_bool().get(is_write) == simdjson::SUCCESS && is_write) {
      write_index = candidate;
    }
    candidates.push_back(std::move(candidate));
  }
  if (write_index) return *write_index;
  if (candidates.size() == 1) return candidates.front();
  if (candidates.empty()) return Status::Error("alias " + std::string(target) + " not found");
  return Status::Error("alias " + std::string(target) + " points to " +
                       std::to_string(candidates.size()) + " indices and none is the write index");
}

Result<IndexMetadata> ParseIndexMetadata(std::string_view body, std::string_view index,
                                         SearchDistribution distribution) {
  JsonDocument json(body, "GET _cluster/state/metadata");
  if (!json.status().ok()) return json.status();
  element entry;
  if (json.root()["metadata"]["indices"].at_key(index).get(entry) != simdjson::SUCCESS) {
    return Status::Error("index " + std::string(index) + " not found");
  }
  element settings;
  if (entry["settings"].get(settings) != simdjson::SUCCESS) {
    return Status::Error("index " + std::string(index) + ": no settings in the cluster state");
  }
  IndexMetadata metadata;
  IndexRoutingSpec& spec = metadata.spec;
  spec.distribution = distribution;
  Result<int32_t> shards = IntSetting(settings, "number_of_shards", index, std::nullopt);
  if (!shards.ok()) return shards.status();
  spec.number_of_shards = *shards;
  Result<int32_t> created = IntSetting(settings, "version.created", index, std::nullopt);
  if (!created.ok()) return created.status();
  spec.version_created = *created;
  Result<int32_t> partition = IntSetting(settings, "routing_partition_size", index, 1);
  if (!partition.ok()) return partition.status();
  spec.routing_partition_size = *partition;
  spec.has_routing_path = Setting(settings, "routing_path").has_value();
  if (std::optional<int64_t> rns = [&]() -> std::optional<int64_t> {
        element value;
        if (entry["routing_num_shards"].get(value) != simdjson::SUCCESS) return std::nullopt;
        return IntValue(value);
      }()) {
    if (*rns < 1 || *rns > INT32_MAX) {
      return Status::Error("index " + std::string(index) + ": invalid routing_num_shards");
    }
    spec.routing_num_shards = static_cast<int32_t>(*rns);
  } else if (std::optional<element> explicit_rns = Setting(settings, "number_of_routing_shards")) {
    if (std::optional<int64_t> value = IntValue(*explicit_rns); value && *value > 0) {
      spec.routing_num_shards = static_cast<int32_t>(std::min<int64_t>(*value, INT32_MAX));
    }
  }
  for (auto [name, out] : {std::pair{"default_pipeline", &metadata.default_pipeline},
                           std::pair{"final_pipeline", &metadata.final_pipeline}}) {
    if (std::optional<element> value = Setting(settings, name)) {
      std::string_view text;
      if (value->get_string().get(text) == simdjson::SUCCESS && text != "_none") *out = text;
    }
  }
  return metadata;
}

Result<std::vector<std::string>> ParsePrimaryPlacement(std::string_view body,
                                                       std::string_view index,
                                                       int32_t number_of_shards) {
  JsonDocument json(body, "GET _cat/shards");
  if (!json.status().ok()) return json.status();
  simdjson::dom::array rows;
  if (json.root().get_array().get(rows) != simdjson::SUCCESS) {
    return Status::Error("GET _cat/shards: not an array");
  }
  std::vector<std::string> primaries(static_cast<size_t>(number_of_shards));
  for (element row : rows) {
    if (StringAt(row, "index").value_or(index) != index) continue;
    if (StringAt(row, "prirep").value_or("") != "p") continue;
    std::optional<int64_t> shard;
    if (element value; row["shard"].get(value) == simdjson::SUCCESS) shard = IntValue(value);
    if (!shard || *shard < 0 || *shard >= number_of_shards) {
      return Status::Error("GET _cat/shards: a shard number outside 0.." +
                           std::to_string(number_of_shards - 1));
    }
    const std::string_view state = StringAt(row, "state").value_or("");
    // A relocating primary still serves writes on its source node until the hand-off.
    if (state != "STARTED" && state != "RELOCATING") continue;
    primaries[static_cast<size_t>(*shard)] = std::string(StringAt(row, "id").value_or(""));
  }
  return primaries;
}

Result<std::vector<ClusterNode>> ParseHttpNodes(std::string_view body) {
  JsonDocument json(body, "GET _nodes/http");
  if (!json.status().ok()) return json.status();
  object nodes;
  if (json.root()["nodes"].get_object().get(nodes) != simdjson::SUCCESS) {
    return Status::Error("GET _nodes/http: no nodes object");
  }
  std::vector<ClusterNode> out;
  for (simdjson::dom::key_value_pair entry : nodes) {
    element http;
    if (entry.value["http"].get(http) != simdjson::SUCCESS) continue;
    std::optional<std::string_view> address = StringAt(http, "publish_address");
    if (!address || entry.key.empty()) continue;  // a node needs an id to hold shards
    ClusterNode node;
    node.id = std::string(entry.key);
    node.name = std::string(StringAt(entry.value, "name").value_or(entry.key));
    const size_t slash = address->rfind('/');
    node.http_address =
        std::string(slash == std::string_view::npos ? *address : address->substr(slash + 1));
    if (node.http_address.empty()) continue;
    out.push_back(std::move(node));
  }
  std::sort(out.begin(), out.end(), [](const ClusterNode& a, const ClusterNode& b) {
    return a.name != b.name ? a.name < b.name : a.id < b.id;
  });
  if (out.empty()) return Status::Error("GET _nodes/http: no node has an HTTP address");
  return out;
}

std::string EncodePathSegment(std::string_view segment) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : segment) {
    const unsigned char byte = static_cast<unsigned char>(c);
    if ((byte >= 'a' && byte <= 'z') || (byte >= 'A' && byte <= 'Z') ||
        (byte >= '0' && byte <= '9') || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(kHex[byte >> 4]);
      out.push_back(kHex[byte & 0xF]);
    }
  }
  return out;
}

}  // namespace hammer::search
