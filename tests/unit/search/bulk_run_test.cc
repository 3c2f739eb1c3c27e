// RunBulk end to end against a scripted two-node cluster on loopback: placement, retries of
// 429s, splitting of a request the server refuses as a whole, dead letters, node failure,
// round-robin, gzip, unknown outcomes. The real-cluster tests are in
// tests/integration/test_bulk.py; this one makes the server misbehave on cue.
#include "hammer/search/bulk_run.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include "hammer/http/server.h"
#include "hammer/net/loop_group.h"
#include "hammer/net/socket.h"
#include "hammer/search/routing.h"

namespace hammer::search {
namespace {

constexpr int32_t kOpenSearch219 = 2'19'00'99 ^ kOpenSearchVersionMask;

std::string Inflate(std::string_view gz) {
  z_stream stream{};
  EXPECT_EQ(inflateInit2(&stream, 15 + 16), Z_OK);
  std::string out(gz.size() * 20 + 1024, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  stream.avail_in = static_cast<uInt>(gz.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(inflate(&stream, Z_FINISH), Z_STREAM_END);
  out.resize(stream.total_out);
  inflateEnd(&stream);
  return out;
}

std::string IdOf(std::string_view action) {
  const size_t at = action.find("\"_id\":\"");
  if (at == std::string_view::npos) return "";
  const size_t start = at + 7;
  return std::string(action.substr(start, action.find('"', start) - start));
}

// Two shards; shard s's primary on node primary_node[s]. Node 2, when listed, is an address
// that refuses connections (a bound socket that never listens, held for the cluster's life).
// With `primary_node_after_first_view`, every placement read after the first reports that
// placement instead, as a real cluster does once it has promoted a replica of a lost node.
class FakeCluster {
 public:
  struct Request {
    int node;
    std::set<int> shards;
    int placement_reads;  // _cat/shards answers served before this request arrived
  };

  explicit FakeCluster(bool list_dead_node = false, std::vector<int> primary_node = {0, 1},
                       std::vector<int> primary_node_after_first_view = {})
      : loops_(1),
        primary_node_(std::move(primary_node)),
        primary_node_later_(std::move(primary_node_after_first_view)) {
    EXPECT_TRUE(loops_.Init().ok());
    IndexRoutingSpec spec;
    spec.distribution = SearchDistribution::kOpenSearch;
    spec.version_created = kOpenSearch219;
    spec.number_of_shards = 2;
    router_ = *ShardRouter::Create(spec);  // the default routing_num_shards, 1024
    for (int i = 0; i < 2; ++i) {
      handlers_.push_back(std::make_unique<NodeHandler>(this, i));
      listeners_.push_back(std::make_unique<http::HttpListener>(
          loops_.loop(0), handlers_.back().get(), http::ServerOptions{}));
      EXPECT_TRUE(listeners_.back()->Listen(*net::SocketAddress::Parse("127.0.0.1:0"), false).ok());
      addresses_.push_back(listeners_.back()->local_address().ToString());
    }
    if (list_dead_node) {
      dead_node_ = net::Fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
      const net::SocketAddress any = *net::SocketAddress::Parse("127.0.0.1:0");
      EXPECT_EQ(bind(dead_node_.get(), any.sockaddr_ptr(), any.length()), 0);
      addresses_.push_back(net::LocalAddress(dead_node_.get())->ToString());
    }
    loops_.Start();
  }
  ~FakeCluster() {
    loops_.StopAll();
    loops_.Join();
  }

  std::string url() const { return "http://" + addresses_[0]; }
  std::string address(int node) const { return addresses_[static_cast<size_t>(node)]; }

  std::mutex mutex;
  std::vector<Request> requests;
  std::map<std::string, int> indexed;  // id → times answered 201
  int whole_429_left = 0;
  int reset_left = 0;
  bool saw_gzip = false;

 private:
  class NodeHandler : public http::RequestHandler {
   public:
    NodeHandler(FakeCluster* cluster, int node) : cluster_(cluster), node_(node) {}
    void OnRequest(const http::IncomingRequest& request, http::Responder responder) override {
      cluster_->Handle(node_, request, responder);
    }

   private:
    FakeCluster* cluster_;
    int node_;
  };

  void Handle(int node, const http::IncomingRequest& request, http::Responder& responder) {
    const std::string_view target = request.head.target;
    if (target == "/") {
      return responder.Respond(200, "application/json",
                               R"({"version":{"distribution":"opensearch","number":"2.19.6"}})");
    }
    if (target.starts_with("/_alias/")) {
      return responder.Respond(404, "application/json",
                               R"({"error":"alias missing","status":404})");
    }
    if (target.starts_with("/_cluster/state/metadata/")) {
      if (!target.starts_with("/_cluster/state/metadata/docs?")) {
        return responder.Respond(200, "application/json", R"({"metadata":{"indices":{}}})");
      }
      return responder.Respond(
          200, "application/json",
          R"({"metadata":{"indices":{"docs":{"routing_num_shards":1024,"settings":{"index":{)"
          R"("number_of_shards":"2","version":{"created":")" +
              std::to_string(kOpenSearch219) + R"("}}}}}}})");
    }
    if (target.starts_with("/_cat/shards/")) {
      std::lock_guard<std::mutex> lock(mutex);
      const std::vector<int>& primaries = placement_reads_ > 0 && !primary_node_later_.empty()
                                              ? primary_node_later_
                                              : primary_node_;
      ++placement_reads_;
      std::string rows = "[";
      for (int shard = 0; shard < 2; ++shard) {
        rows += (shard ? "," : "") + std::string(R"({"index":"docs","shard":")") +
                std::to_string(shard) + R"(","prirep":"p","state":"STARTED","id":"N)" +
                std::to_string(primaries[static_cast<size_t>(shard)]) + "\"}";
      }
      return responder.Respond(200, "application/json", rows + "]");
    }
    if (target.starts_with("/_nodes/http")) {
      std::string nodes = R"({"nodes":{)";
      for (size_t i = 0; i < addresses_.size(); ++i) {
        nodes += (i ? "," : "") + std::string("\"N") + std::to_string(i) + R"(":{"name":"node-)" +
                 std::to_string(i) + R"(","http":{"publish_address":")" + addresses_[i] + "\"}}";
      }
      return responder.Respond(200, "application/json", nodes + "}}");
    }
    if (target.find("/_bulk") == std::string_view::npos) {
      return responder.Respond(404, "text/plain", "no");
    }
    std::string body(request.body);
    if (http::FindHeader(request.head.headers, "Content-Encoding") == "gzip") {
      body = Inflate(body);
      std::lock_guard<std::mutex> lock(mutex);
      saw_gzip = true;
    }
    std::lock_guard<std::mutex> lock(mutex);
    if (whole_429_left > 0) {
      --whole_429_left;
      return responder.Respond(429, "application/json", R"({"error":"busy","status":429})");
    }
    std::vector<std::pair<std::string, std::string>> pairs;
    std::istringstream lines(body);
    std::string action, source;
    while (std::getline(lines, action) && std::getline(lines, source)) {
      pairs.emplace_back(action, source);
    }
    Request seen{node, {}, placement_reads_};
    bool poison = false;
    bool reset = false;
    for (const auto& [a, s] : pairs) {
      const std::string id = IdOf(a);
      if (!id.empty()) seen.shards.insert(router_->Route(id, std::nullopt)->shard());
      poison = poison || s.find("poison") != std::string::npos;
      reset = reset || s.find("reset-me") != std::string::npos;
    }
    requests.push_back(seen);
    if (poison) {
      return responder.Respond(400, "application/json",
                               R"({"error":{"type":"illegal_argument_exception"},"status":400})");
    }
    if (reset && reset_left > 0) {
      --reset_left;
      return responder.RespondRawThenReset("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{");
    }
    std::string items;
    for (const auto& [a, s] : pairs) {
      const std::string id = IdOf(a);
      std::string item;
      if (s.find("bad") != std::string::npos) {
        item = R"({"index":{"status":400,"error":{"type":"mapper_parsing_exception",)"
               R"("reason":"failed to parse field [n]"}}})";
      } else if (s.find("busy") != std::string::npos ||
                 (s.find("flaky") != std::string::npos && flaky_seen_.insert(id).second)) {
        item = R"({"index":{"status":429,"error":{"type":"es_rejected_execution_exception",)"
               R"("reason":"queue full"}}})";
      } else {
        ++indexed[id.empty() ? "<auto>" : id];
        item = R"({"index":{"status":201}})";
      }
      items += (items.empty() ? "" : ",") + item;
    }
    responder.Respond(200, "application/json",
                      R"({"took":1,"errors":true,"items":[)" + items + "]}");
  }

  net::LoopGroup loops_;
  std::vector<int> primary_node_;
  std::vector<int> primary_node_later_;
  int placement_reads_ = 0;  // guarded by mutex
  net::Fd dead_node_;
  std::optional<ShardRouter> router_;
  std::vector<std::unique_ptr<NodeHandler>> handlers_;
  std::vector<std::unique_ptr<http::HttpListener>> listeners_;
  std::vector<std::string> addresses_;
  std::set<std::string> flaky_seen_;
};

class BulkRunTest : public testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/hammer-bulk-run-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }

  // Writes the input and returns options for it.
  BulkOptions Options(const FakeCluster& cluster, const std::string& input) {
    const std::string path = dir_ + "/input.ndjson";
    std::ofstream(path) << input;
    BulkOptions options;
    options.discovery.seeds = {*http::ParseUrl(cluster.url())};
    options.discovery.target = "docs";
    options.feeder.input_path = path;
    options.feeder.limits = {50, 1 << 20};
    options.writer.backoff = {kMillisecond, 5 * kMillisecond, 5};
    options.writer.timeout = 5 * kSecond;
    options.dead_letter_path = dir_ + "/dead.jsonl";
    return options;
  }

  std::vector<std::string> DeadLetters() {
    std::ifstream in(dir_ + "/dead.jsonl");
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);)
      lines.push_back(line);
    return lines;
  }

  static std::string Documents(int n, const std::map<int, std::string>& special = {}) {
    std::string out;
    for (int i = 0; i < n; ++i) {
      out += R"({"index":{"_id":"doc-)" + std::to_string(i) + "\"}}\n";
      auto it = special.find(i);
      out += R"({"n":)" + std::to_string(i) +
             (it == special.end() ? "" : R"(,"tag":")" + it->second + "\"") + "}\n";
    }
    return out;
  }

  std::string dir_;
};

TEST_F(BulkRunTest, ShardAwareWithRetriesSplitsAndDeadLetters) {
  FakeCluster cluster;
  cluster.whole_429_left = 1;
  std::string input =
      Documents(300, {{5, "bad"}, {77, "bad"}, {10, "flaky"}, {20, "flaky"}, {150, "poison"}});
  input += "{not json\n";
  Result<BulkResult> result = RunBulk(Options(cluster, input), {});
  ASSERT_TRUE(result.ok()) << result.status().message();
  const BulkStats& s = result->stats;
  EXPECT_EQ(s.documents_read, 301u);
  EXPECT_EQ(s.indexed, 297u);
  EXPECT_EQ(s.invalid_input, 1u);
  EXPECT_EQ(s.rejected_by_server, 3u);
  EXPECT_TRUE(s.balanced());
  EXPECT_EQ(s.requests_off_primary, 0u);
  EXPECT_EQ(s.shard_requests_remote, 0u);
  EXPECT_EQ(s.requests_rejected, 1u);  // the whole-request 429
  EXPECT_GE(s.requests_split, 1u);     // the 400 for the poisoned request
  EXPECT_GE(s.items_retried, 2u);
  std::lock_guard<std::mutex> lock(cluster.mutex);
  for (const FakeCluster::Request& request : cluster.requests) {
    // Node i holds primary i: every request carried only that shard's documents.
    EXPECT_EQ(request.shards, std::set<int>{request.node});
  }
  EXPECT_EQ(cluster.indexed.size(), 297u);
  for (const auto& [id, times] : cluster.indexed)
    EXPECT_EQ(times, 1) << id;
  std::vector<std::string> dead = DeadLetters();
  ASSERT_EQ(dead.size(), 4u);
  int mapping = 0, http_error = 0, invalid = 0;
  for (const std::string& line : dead) {
    mapping +=
        line.find(R"("status":400,"error_type":"mapper_parsing_exception")") != std::string::npos;
    http_error += line.find(R"("status":400,"error_type":"http_error")") != std::string::npos &&
                  line.find(R"("tag":"poison")") != std::string::npos;
    invalid +=
        line.find(R"("error_type":"invalid_input","action":"{not json")") != std::string::npos;
  }
  EXPECT_EQ(mapping, 2);
  EXPECT_EQ(http_error, 1);
  EXPECT_EQ(invalid, 1);
}

TEST_F(BulkRunTest, PersistentRejectionsExhaustTheRetriesWithTheServersReason) {
  FakeCluster cluster;
  BulkOptions options = Options(cluster, Documents(40, {{3, "busy"}, {17, "busy"}}));
  options.writer.backoff.max_retries = 3;
  Result<BulkResult> result = RunBulk(options, {});
  ASSERT_TRUE(result.ok()) << result.status().message();
  const BulkStats& s = result->stats;
  EXPECT_EQ(s.indexed, 38u);
  EXPECT_EQ(s.retries_exhausted, 2u);
  EXPECT_EQ(s.items_retried, 2u * 3u);
  EXPECT_TRUE(s.balanced());
  std::vector<std::string> dead = DeadLetters();
  ASSERT_EQ(dead.size(), 2u);
  const std::string reason = R"("reason":"retries exhausted after 3 retries; last: )"
                             R"(es_rejected_execution_exception: queue full")";
  for (const std::string& line : dead) {
    EXPECT_NE(line.find(reason), std::string::npos) << line;
    EXPECT_NE(line.find(R"("status":429,"error_type":"retries_exhausted")"), std::string::npos)
        << line;
    EXPECT_NE(line.find(R"("tag":"busy")"), std::string::npos) << line;
  }
}

TEST_F(BulkRunTest, RoundRobinSpreadsMixedBatches) {
  FakeCluster cluster;
  BulkOptions options = Options(cluster, Documents(400));
  options.routing = BulkRouting::kRoundRobin;
  Result<BulkResult> result = RunBulk(options, {});
  ASSERT_TRUE(result.ok()) << result.status().message();
  const BulkStats& s = result->stats;
  EXPECT_EQ(s.indexed, 400u);
  EXPECT_EQ(s.requests, 8u);
  EXPECT_EQ(s.shard_requests, 16u);        // every batch of 50 holds both shards
  EXPECT_EQ(s.shard_requests_remote, 8u);  // one of the two is always elsewhere
  EXPECT_EQ(s.requests_off_primary, 8u);
  ASSERT_EQ(s.nodes.size(), 2u);
  EXPECT_EQ(s.nodes[0].requests, 4u);
  EXPECT_EQ(s.nodes[1].requests, 4u);
}

TEST_F(BulkRunTest, APrimaryOnADeadNodeFailsOverToAnother) {
  // Shard 1's primary is on node 2, which refuses connections; from the second placement read
  // on, the cluster reports it on node 1 (a promoted replica). 2000 documents in batches of 50
  // keep shard 1's batches coming long after the first failure and the refresh it starts.
  FakeCluster cluster(/*list_dead_node=*/true, /*primary_node=*/{0, 2},
                      /*primary_node_after_first_view=*/{0, 1});
  BulkOptions options = Options(cluster, Documents(2000));
  options.min_refresh_gap = 0;
  Result<BulkResult> result = RunBulk(options, {});
  ASSERT_TRUE(result.ok()) << result.status().message();
  const BulkStats& s = result->stats;
  EXPECT_EQ(s.indexed, 2000u);
  EXPECT_TRUE(s.balanced());
  EXPECT_GE(s.requests_failed, 1u);  // the dead node was tried
  // The view read after the failure moved the primary, and it was the one in use from then on:
  // the dead node got no request under it, node 1 (the new primary's) did.
  EXPECT_EQ(s.placement_changes, 1u);
  std::map<std::string, NodeTraffic> by_address;
  for (const NodeTraffic& node : s.nodes)
    by_address[node.address] = node;
  ASSERT_EQ(by_address.count(cluster.address(2)), 1u);
  EXPECT_GE(by_address[cluster.address(2)].requests, 1u);
  EXPECT_EQ(by_address[cluster.address(2)].requests_since_placement_change, 0u);
  EXPECT_GE(by_address[cluster.address(1)].requests_since_placement_change, 1u);
  std::lock_guard<std::mutex> lock(cluster.mutex);
  // What the server saw: the last request carrying shard 1 reached node 1, shard 1's primary in
  // the new placement, and carried only shard 1.
  const FakeCluster::Request* last_of_shard1 = nullptr;
  for (const FakeCluster::Request& request : cluster.requests) {
    if (request.shards.count(1) != 0) last_of_shard1 = &request;
  }
  ASSERT_NE(last_of_shard1, nullptr);
  EXPECT_EQ(last_of_shard1->node, 1);
  EXPECT_EQ(last_of_shard1->shards, std::set<int>{1});
  EXPECT_GE(last_of_shard1->placement_reads, 2);
  for (const auto& [id, times] : cluster.indexed)
    EXPECT_EQ(times, 1) << id;
}

TEST_F(BulkRunTest, GzipBodies) {
  FakeCluster cluster;
  BulkOptions options = Options(cluster, Documents(120));
  options.writer.gzip = true;
  Result<BulkResult> result = RunBulk(options, {});
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->stats.indexed, 120u);
  EXPECT_LT(result->stats.body_bytes_sent, result->stats.body_bytes_uncompressed);
  std::lock_guard<std::mutex> lock(cluster.mutex);
  EXPECT_TRUE(cluster.saw_gzip);
}

TEST_F(BulkRunTest, IdlessDocumentsWithAnUnknownOutcomeAreNotRetried) {
  FakeCluster cluster;
  cluster.reset_left = 1;
  std::string input = R"({"index":{"_id":"doc-1"}})"
                      "\n"
                      R"({"n":1,"tag":"reset-me"})"
                      "\n"
                      R"({"index":{}})"
                      "\n"
                      R"({"n":2})"
                      "\n";
  BulkOptions options = Options(cluster, input);
  options.routing = BulkRouting::kRoundRobin;  // both in one request
  // The reset is sometimes seen as a reset, sometimes as a timeout: the same unknown outcome.
  options.writer.timeout = 500 * kMillisecond;
  Result<BulkResult> result = RunBulk(options, {});
  ASSERT_TRUE(result.ok()) << result.status().message();
  const BulkStats& s = result->stats;
  EXPECT_EQ(s.indexed, 1u);
  EXPECT_EQ(s.outcome_unknown, 1u);
  EXPECT_EQ(s.unroutable, 1u);
  EXPECT_TRUE(s.balanced());
  std::vector<std::string> dead = DeadLetters();
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_NE(dead[0].find(R"("error_type":"outcome_unknown","action":{"index":{}})"),
            std::string::npos);
}

TEST_F(BulkRunTest, UnknownIndexEndsTheRunBeforeReading) {
  FakeCluster cluster;
  BulkOptions options = Options(cluster, Documents(3));
  options.discovery.target = "nope";
  Result<BulkResult> result = RunBulk(options, {});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(), "index nope not found");
}

}  // namespace
}  // namespace hammer::search

namespace hammer::search {
namespace {

TEST(BulkStatsTest, TheCounterTableKeepsTheRulesAndMerges) {
  Status table = CheckCounterSpecs(BulkStats::kCounterSpecs);
  EXPECT_TRUE(table.ok()) << table.message();
  BulkStats a, b;
  a.documents_read = 3;
  a.indexed = 2;
  a.invalid_input = 1;
  b.documents_read = 4;
  b.indexed = 4;
  b.discovery_failures = 1;
  a.Merge(b);
  EXPECT_EQ(a.documents_read, 7u);
  EXPECT_EQ(a.indexed, 6u);
  EXPECT_EQ(a.discovery_failures, 1u);
  EXPECT_TRUE(a.balanced());
  const std::string json = BulkSummaryJson(a);
  EXPECT_NE(json.find("\"documents_read\":7"), std::string::npos) << json;
  EXPECT_NE(json.find("\"dead_lettered\":1"), std::string::npos) << json;
  EXPECT_NE(json.find("\"discovery_failures\":1"), std::string::npos) << json;
}

}  // namespace
}  // namespace hammer::search
