#include "hammer/search/cluster_discovery.h"

#include <algorithm>
#include <utility>

#include "hammer/net/event_loop.h"
#include "hammer/net/resolver.h"

namespace hammer::search {
namespace {

constexpr size_t kMaxBodyBytes = 64 * 1024 * 1024;

std::string Snippet(std::string_view body) {
  std::string text(body.substr(0, 300));
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

std::string BaseUrl(const http::Url& url) {
  return url.Origin();
}

}  // namespace

std::string NodeBaseUrl(const DiscoveryOptions& options, const std::string& http_address) {
  const std::string scheme = options.seeds.empty() ? "http" : options.seeds.front().scheme;
  return scheme + "://" + http_address;
}

class ClusterDiscovery::Fetch final : public http::ResponseHandler {
 public:
  explicit Fetch(ClusterDiscovery* owner) : owner_(owner) {}

  void Reset() {
    status_ = 0;
    body_.clear();
    too_big_ = false;
  }
  void OnResponseHead(const http::ResponseHead& head) override { status_ = head.status; }
  void OnResponseBody(std::string_view data) override {
    if (body_.size() + data.size() > kMaxBodyBytes) {
      too_big_ = true;
      return;
    }
    body_.append(data);
  }
  void OnResponseComplete(const http::ExchangeResult& result) override {
    std::string error;
    if (result.failure) {
      error = result.detail.empty() ? std::string(FailureName(*result.failure)) : result.detail;
    } else if (too_big_) {
      error = "answer larger than 64 MiB";
    }
    owner_->OnFetched(status_, std::move(body_), std::move(error));
  }

 private:
  ClusterDiscovery* owner_;
  int status_ = 0;
  std::string body_;
  bool too_big_ = false;
};

ClusterDiscovery::ClusterDiscovery(http::HttpClient* client, DiscoveryOptions options)
    : client_(client), options_(std::move(options)), fetch_(std::make_unique<Fetch>(this)) {}

ClusterDiscovery::~ClusterDiscovery() = default;

void ClusterDiscovery::AvoidAddress(const std::string& http_address) {
  const std::string base = NodeBaseUrl(options_, http_address);
  if (std::find(avoided_.begin(), avoided_.end(), base) == avoided_.end()) {
    avoided_.push_back(base);
  }
}

void ClusterDiscovery::Refresh(Callback done) {
  waiters_.push_back(std::move(done));
  if (waiters_.size() > 1) return;  // joins the refresh in progress
  candidates_.clear();
  auto add = [this](const std::string& base) {
    if (!base.empty() &&
        std::find(candidates_.begin(), candidates_.end(), base) == candidates_.end()) {
      candidates_.push_back(base);
    }
  };
  add(last_good_);
  for (const http::Url& seed : options_.seeds)
    add(BaseUrl(seed));
  for (const std::string& base : known_)
    add(base);
  std::stable_partition(candidates_.begin(), candidates_.end(), [this](const std::string& base) {
    return std::find(avoided_.begin(), avoided_.end(), base) == avoided_.end();
  });
  candidate_ = 0;
  if (candidates_.empty()) {
    client_->loop()->Post([this] { Finish(Status::Error("no cluster URL to ask")); });
    return;
  }
  StartCandidate();
}

void ClusterDiscovery::StartCandidate() {
  view_ = ClusterView{};
  view_.target = options_.target;
  step_ = Step::kRoot;
  Send("/");
}

void ClusterDiscovery::Send(const std::string& path) {
  Result<http::Url> url = http::ParseUrl(candidates_[candidate_] + path);
  if (!url.ok()) {
    // Post: a callback must never run inside Refresh().
    client_->loop()->Post([this, why = url.status().message()] { NextCandidate(why); });
    return;
  }
  head_ = http::SerializeRequestHead("GET", *url, options_.headers, 0);
  http::ClientRequest request;
  request.origin = client_->GetOrigin(*url);
  request.head = head_;
  request.deadline = client_->loop()->UpdateNow() + options_.timeout;
  fetch_->Reset();
  client_->Send(request, fetch_.get());
}

void ClusterDiscovery::NextCandidate(std::string why) {
  if (++candidate_ >= candidates_.size()) {
    Finish(Status::Error("no node answered the discovery requests (last: " + why + ")"));
    return;
  }
  StartCandidate();
}

void ClusterDiscovery::OnFetched(int status, std::string body, std::string transport_error) {
  const std::string& node = candidates_[candidate_];
  if (!transport_error.empty()) {
    NextCandidate(node + ": " + transport_error);
    return;
  }
  if (status == 429 || status >= 500) {
    NextCandidate(node + ": HTTP " + std::to_string(status));
    return;
  }
  const std::string& index = view_.resolved.index;
  auto fail = [&](std::string_view what) {
    Finish(Status::Error(std::string(what) + " answered HTTP " + std::to_string(status) + ": " +
                         Snippet(body)));
  };
  switch (step_) {
    case Step::kRoot: {
      if (status != 200) return fail("GET /");
      Result<ServerInfo> info = ParseServerInfo(body);
      if (!info.ok()) return Finish(info.status());
      view_.server = std::move(*info);
      step_ = Step::kAlias;
      return Send("/_alias/" + EncodePathSegment(options_.target));
    }
    case Step::kAlias: {
      if (status == 404) {
        view_.resolved = IndexTarget{options_.target, false, std::nullopt};
      } else if (status == 200) {
        Result<IndexTarget> target = ParseAliasTarget(body, options_.target);
        if (!target.ok()) return Finish(target.status());
        view_.resolved = std::move(*target);
      } else {
        return fail("GET _alias");
      }
      step_ = Step::kMetadata;
      return Send("/_cluster/state/metadata/" + EncodePathSegment(view_.resolved.index) +
                  "?filter_path=metadata.indices.*.routing_num_shards,"
                  "metadata.indices.*.settings.index");
    }
    case Step::kMetadata: {
      if (status != 200 && status != 404) return fail("GET _cluster/state/metadata");
      Result<IndexMetadata> metadata = ParseIndexMetadata(body, index, view_.server.distribution);
      if (!metadata.ok()) return Finish(metadata.status());
      view_.metadata = std::move(*metadata);
      step_ = Step::kShards;
      return Send("/_cat/shards/" + EncodePathSegment(index) +
                  "?format=json&h=index,shard,prirep,state,id");
    }
    case Step::kShards: {
      if (status != 200) return fail("GET _cat/shards");
      Result<std::vector<std::string>> primaries =
          ParsePrimaryPlacement(body, index, view_.metadata.spec.number_of_shards);
      if (!primaries.ok()) return Finish(primaries.status());
      view_.primary_node_ids = std::move(*primaries);
      step_ = Step::kNodes;
      return Send("/_nodes/http?filter_path=nodes.*.name,nodes.*.http.publish_address");
    }
    case Step::kNodes: {
      if (status != 200) return fail("GET _nodes/http");
      Result<std::vector<ClusterNode>> nodes = ParseHttpNodes(body);
      if (!nodes.ok()) return Finish(nodes.status());
      view_.nodes = std::move(*nodes);
      last_good_ = node;
      known_.clear();
      for (const ClusterNode& n : view_.nodes)
        known_.push_back(NodeBaseUrl(options_, n.http_address));
      avoided_.clear();
      return Finish(std::move(view_));
    }
  }
}

void ClusterDiscovery::Finish(Result<ClusterView> result) {
  std::vector<Callback> waiters = std::move(waiters_);
  waiters_.clear();
  for (Callback& done : waiters)
    done(result);
}

Result<ClusterView> DiscoverNow(const DiscoveryOptions& options,
                                const http::ClientOptions& client_options) {
  net::EventLoop loop;
  if (Status status = loop.Init(); !status.ok()) return status;
  net::Resolver resolver(1);
  Result<ClusterView> result = Status::Error("discovery did not finish");
  {
    http::HttpClient client(&loop, &resolver, client_options);
    ClusterDiscovery discovery(&client, options);
    discovery.Refresh([&](Result<ClusterView> view) {
      result = std::move(view);
      loop.Stop();
    });
    loop.Run();
  }
  return result;
}

}  // namespace hammer::search
