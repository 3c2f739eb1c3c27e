// ClusterDiscovery: reads a ClusterView (cluster_view.h) over HTTP, without blocking the loop.
//
// A refresh sends, one after the other, GET /, GET /_alias/<target>, GET
// /_cluster/state/metadata/<index>, GET /_cat/shards/<index> and GET /_nodes/http to one node.
// Which node: the one that answered last, then the seed URLs (--cluster), then every node the
// previous views listed. When a node does not answer (connect failure, timeout, 429/5xx), the
// refresh starts over on the next one, so a refresh survives the loss of any node but the
// last; each node is tried once per refresh. Nodes reported down with AvoidAddress() go last.
//
// Errors: the callback gets the first definite error (target not found, an alias without a
// write index, 401/403, unparsable answers) or, when every node failed, the last node's failure.
// Ownership: borrows the HttpClient (which must outlive it). Callbacks run on the client's loop,
// never inline in Refresh(). Threads: the client's loop thread only.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hammer/base/status.h"
#include "hammer/http/client.h"
#include "hammer/http/request_writer.h"
#include "hammer/search/cluster_view.h"

namespace hammer::search {

struct DiscoveryOptions {
  std::vector<http::Url> seeds;  // at least one
  std::string target;            // index or alias name
  http::HeaderList headers;      // added to every request (e.g. Authorization)
  Nanos timeout = 10 * kSecond;  // per request
};

class ClusterDiscovery {
 public:
  using Callback = std::function<void(Result<ClusterView>)>;

  ClusterDiscovery(http::HttpClient* client, DiscoveryOptions options);
  ~ClusterDiscovery();
  ClusterDiscovery(const ClusterDiscovery&) = delete;
  ClusterDiscovery& operator=(const ClusterDiscovery&) = delete;

  // Starts a refresh, or joins the one running: every waiting callback gets its result.
  void Refresh(Callback done);
  bool running() const { return !waiters_.empty(); }

  // Tries `http_address` ("host:port") last until a refresh succeeds through another node.
  void AvoidAddress(const std::string& http_address);

 private:
  class Fetch;
  enum class Step { kRoot, kAlias, kMetadata, kShards, kNodes };

  void StartCandidate();
  void Send(const std::string& path);
  void OnFetched(int status, std::string body, std::string transport_error);
  void NextCandidate(std::string why);
  void Finish(Result<ClusterView> result);

  http::HttpClient* client_;
  DiscoveryOptions options_;
  std::unique_ptr<Fetch> fetch_;
  std::vector<Callback> waiters_;
  std::vector<std::string> known_;    // addresses learned from views
  std::vector<std::string> avoided_;  // reported down
  std::string last_good_;
  // The refresh in progress.
  std::vector<std::string> candidates_;
  size_t candidate_ = 0;
  Step step_ = Step::kRoot;
  std::string head_;
  ClusterView view_;
};

// Start-up helper for `hammer route`: one refresh on a private loop, blocking the caller.
Result<ClusterView> DiscoverNow(const DiscoveryOptions& options,
                                const http::ClientOptions& client_options);

// The seeds' scheme with a node's "host:port": the base URL for talking to that node.
std::string NodeBaseUrl(const DiscoveryOptions& options, const std::string& http_address);

}  // namespace hammer::search
