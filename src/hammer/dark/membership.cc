#include "hammer/dark/membership.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <span>

namespace hammer::dark {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kStrategies[] = {"relative", "identical", "constant-qps"};
constexpr std::string_view kSamplings[] = {"accumulator", "bernoulli"};

Status NonNegativeNumber(const Json& value, const std::string& where, double* out) {
  if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < 0) {
    return Status::Error(where + ": must be a number >= 0");
  }
  *out = value.get<double>();
  return Status::Ok();
}

Status OneOf(const Json& value, const std::string& where, std::span<const std::string_view> names,
             std::string* out) {
  if (value.is_string() &&
      std::find(names.begin(), names.end(), value.get<std::string>()) != names.end()) {
    *out = value.get<std::string>();
    return Status::Ok();
  }
  std::string list;
  for (std::string_view name : names)
    list += (list.empty() ? "" : " | ") + std::string(name);
  return Status::Error(where + ": must be one of " + list);
}

Status Count(const Json& value, const std::string& where, uint32_t min, uint32_t* out) {
  if (!value.is_number_integer() || value.get<int64_t>() < min ||
      value.get<int64_t>() > UINT32_MAX) {
    return Status::Error(where + ": must be an integer >= " + std::to_string(min));
  }
  *out = static_cast<uint32_t>(value.get<int64_t>());
  return Status::Ok();
}

// One entry of "dark". With `counts` (the static form), "urls" and "instances" go to `out`.
Status ParseDarkCluster(const std::string& name, const Json& entry, bool counts,
                        StaticDarkCluster* out) {
  const std::string where = "dark." + name;
  if (Status s = CheckClusterName(where, name); !s.ok()) return s;
  if (!entry.is_object()) return Status::Error(where + ": must be an object");
  DarkClusterConfig& config = out->config;
  config.name = name;
  for (const auto& [key, value] : entry.items()) {
    const std::string at = where + "." + key;
    Status s;
    if (key == "multiplier") {
      s = NonNegativeNumber(value, at, &config.multiplier);
    } else if (key == "strategy") {
      s = OneOf(value, at, kStrategies, &config.strategy);
    } else if (key == "target_rate") {
      s = NonNegativeNumber(value, at, &config.target_rate);
    } else if (key == "sampling") {
      s = OneOf(value, at, kSamplings, &config.sampling);
    } else if (key == "buffer_capacity") {
      s = Count(value, at, 1, &config.buffer_capacity);
    } else if (key == "buffer_ttl_s") {
      double seconds = 0;
      s = NonNegativeNumber(value, at, &seconds);
      if (s.ok() && (seconds <= 0 || seconds > 86400)) {
        s = Status::Error(at + ": must be > 0 and at most 86400");
      }
      config.buffer_ttl = static_cast<Nanos>(std::llround(seconds * kSecond));
    } else if (counts && key == "instances") {
      s = Count(value, at, 0, &out->instances);
    } else if (counts && key == "urls") {
      if (!value.is_array()) return Status::Error(at + ": must be an array of URLs");
      for (const Json& url : value) {
        Result<http::Url> parsed = url.is_string() ? http::ParseUrl(url.get<std::string>())
                                                   : Status::Error("not a string");
        if (!parsed.ok()) return Status::Error(at + ": " + parsed.status().message());
        out->urls.push_back(std::move(parsed).value());
      }
    } else if (key == "instances" || key == "urls") {
      s = Status::Error(at + ": not allowed here; ZooKeeper counts the cluster's members");
    } else {
      s = Status::Error(at + ": unknown key");
    }
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

Result<StaticMembershipOptions> ParseConfig(std::string_view text, bool counts) {
  Json root;
  try {
    root = Json::parse(text);
  } catch (const Json::exception& e) {
    return Status::Error(std::string("membership config: invalid JSON: ") + e.what());
  }
  if (!root.is_object()) return Status::Error("membership config: must be a JSON object");
  StaticMembershipOptions out;
  out.regular_cluster.clear();
  for (const auto& [key, value] : root.items()) {
    if (key == "regular") {
      if (!value.is_string()) return Status::Error("regular: must be a string");
      out.regular_cluster = value.get<std::string>();
      if (Status s = CheckClusterName("regular", out.regular_cluster); !s.ok()) return s;
    } else if (key == "dark") {
      if (!value.is_object()) return Status::Error("dark: must be an object of clusters by name");
      for (const auto& [name, entry] : value.items()) {
        StaticDarkCluster cluster;
        if (Status s = ParseDarkCluster(name, entry, counts, &cluster); !s.ok()) return s;
        out.dark.push_back(std::move(cluster));
      }
    } else if (counts && key == "regular_instances") {
      if (Status s = Count(value, key, 0, &out.regular_instances); !s.ok()) return s;
    } else if (key == "regular_instances") {
      return Status::Error(key + ": not allowed here; ZooKeeper counts the cluster's members");
    } else {
      return Status::Error(key + ": unknown key");
    }
  }
  for (const StaticDarkCluster& cluster : out.dark) {
    if (cluster.config.name == out.regular_cluster) {
      return Status::Error("dark." + cluster.config.name + ": is also the regular cluster");
    }
  }
  // nlohmann's object is a std::map, so the clusters are already sorted by name.
  return out;
}

void SortByName(std::vector<DarkClusterMembership>& clusters) {
  std::sort(clusters.begin(), clusters.end(),
            [](const auto& a, const auto& b) { return a.config.name < b.config.name; });
}

}  // namespace

Status CheckClusterName(std::string_view where, std::string_view name) {
  if (name.empty()) return Status::Error(std::string(where) + ": cluster name is empty");
  if (name.size() > 128 || name == "." || name == ".." ||
      std::any_of(name.begin(), name.end(),
                  [](char c) { return c <= ' ' || c > '~' || c == '/'; })) {
    return Status::Error(std::string(where) + ": invalid cluster name '" + std::string(name) +
                         "' (printable ASCII without '/' or spaces, at most 128 bytes)");
  }
  return Status::Ok();
}

const DarkClusterMembership* MembershipSnapshot::FindDark(std::string_view name) const {
  for (const DarkClusterMembership& cluster : dark) {
    if (cluster.config.name == name) return &cluster;
  }
  return nullptr;
}

bool MembershipSnapshot::SameMembership(const MembershipSnapshot& other) const {
  return regular_cluster == other.regular_cluster && regular_instances == other.regular_instances &&
         dark == other.dark;
}

Result<MembershipConfig> ParseMembershipConfig(std::string_view json) {
  Result<StaticMembershipOptions> parsed = ParseConfig(json, /*counts=*/false);
  if (!parsed.ok()) return parsed.status();
  MembershipConfig config;
  config.regular = std::move(parsed->regular_cluster);
  for (StaticDarkCluster& cluster : parsed->dark)
    config.dark.push_back(std::move(cluster.config));
  return config;
}

Result<StaticMembershipOptions> ParseStaticMembershipConfig(std::string_view json) {
  Result<StaticMembershipOptions> parsed = ParseConfig(json, /*counts=*/true);
  if (parsed.ok() && parsed->regular_cluster.empty()) parsed->regular_cluster = "regular";
  return parsed;
}

std::string MembershipConfigToJson(const MembershipConfig& config) {
  Json dark = Json::object();
  for (const DarkClusterConfig& cluster : config.dark) {
    dark[cluster.name] = {{"multiplier", cluster.multiplier},
                          {"strategy", cluster.strategy},
                          {"target_rate", cluster.target_rate},
                          {"sampling", cluster.sampling},
                          {"buffer_capacity", cluster.buffer_capacity},
                          {"buffer_ttl_s", static_cast<double>(cluster.buffer_ttl) / kSecond}};
  }
  Json root = {{"dark", dark}};
  if (!config.regular.empty()) root["regular"] = config.regular;
  return root.dump();
}

Result<http::Url> ParseMemberData(std::string_view data) {
  std::string_view text = data;
  std::string from_json;
  if (!data.empty() && data.front() == '{') {
    Json root = Json::parse(data, nullptr, /*allow_exceptions=*/false);
    if (!root.is_object() || !root.contains("url") || !root["url"].is_string()) {
      return Status::Error("member data: expected {\"url\": \"http://host:port\"}");
    }
    from_json = root["url"].get<std::string>();
    text = from_json;
  }
  if (text.find("://") == std::string_view::npos)
    return http::ParseUrl("http://" + std::string(text));
  return http::ParseUrl(text);
}

std::string MemberData(const http::Url& url) {
  return Json{{"url", url.Origin()}}.dump();
}

MembershipSnapshot BuildSnapshot(
    const MembershipConfig& config, uint32_t regular_instances,
    const std::map<std::string, std::vector<http::Url>>& dark_members) {
  MembershipSnapshot snapshot;
  snapshot.regular_cluster = config.regular;
  snapshot.regular_instances = regular_instances;
  snapshot.stale = false;
  for (const DarkClusterConfig& cluster : config.dark) {
    DarkClusterMembership& out = snapshot.dark.emplace_back();
    out.config = cluster;
    if (auto it = dark_members.find(cluster.name); it != dark_members.end()) out.urls = it->second;
    out.instances = static_cast<uint32_t>(out.urls.size());
  }
  SortByName(snapshot.dark);
  return snapshot;
}

SnapshotHolder::SnapshotHolder(MembershipSnapshot initial) {
  Publish(std::move(initial));
}

std::shared_ptr<const MembershipSnapshot> SnapshotHolder::Publish(MembershipSnapshot next) {
  std::shared_ptr<const MembershipSnapshot> published;
  {
    std::lock_guard lock(mu_);
    next.version = version_.load(std::memory_order_relaxed) + 1;
    if (next.last_update == 0) next.last_update = MonoNow();
    published = std::make_shared<const MembershipSnapshot>(std::move(next));
    // The pointer first, then the version: a reader that sees the new version finds (at
    // least) the new snapshot.
    current_.store(published, std::memory_order_release);
    version_.store(published->version, std::memory_order_release);
  }
  published_.notify_all();
  return published;
}

std::shared_ptr<const MembershipSnapshot> SnapshotHolder::WaitFor(
    const std::function<bool(const MembershipSnapshot&)>& accept, Nanos timeout) const {
  std::unique_lock lock(mu_);
  published_.wait_for(lock, std::chrono::nanoseconds(timeout),
                      [&] { return accept(*current_.load(std::memory_order_acquire)); });
  return current_.load(std::memory_order_acquire);
}

void SnapshotReader::Reload() {
  snapshot_ = holder_->Load();
  seen_version_ = snapshot_->version;
}

StaticMembership::StaticMembership(const StaticMembershipOptions& options)
    : Membership(MakeSnapshot(options)) {}

MembershipSnapshot StaticMembership::MakeSnapshot(const StaticMembershipOptions& options) {
  MembershipSnapshot snapshot;
  snapshot.regular_cluster = options.regular_cluster;
  snapshot.regular_instances = options.regular_instances;
  snapshot.stale = false;
  for (const StaticDarkCluster& cluster : options.dark) {
    DarkClusterMembership& out = snapshot.dark.emplace_back();
    out.config = cluster.config;
    out.urls = cluster.urls;
    out.instances =
        cluster.instances != 0 ? cluster.instances : static_cast<uint32_t>(cluster.urls.size());
  }
  SortByName(snapshot.dark);
  return snapshot;
}

}  // namespace hammer::dark
