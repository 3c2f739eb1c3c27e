// RequestFeed's cache of prepared requests: bounded, a line is admitted on its second sighting,
// repeated lines stay cached however many distinct lines stream by, and a request in flight is
// never reused for another line.
#include "hammer/load/request_feed.h"

#include <gtest/gtest.h>

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hammer/load/load_worker.h"
#include "hammer/net/event_loop.h"
#include "hammer/net/resolver.h"

namespace hammer::load {
namespace {

class RequestFeedTest : public ::testing::Test {
 protected:
  RequestFeedTest() : resolver_(0), client_(&loop_, &resolver_, http::ClientOptions{}) {
    options_.max_prepared_targets = 4;
  }

  // The feed over `text` (it must outlive the feed).
  RequestFeed Feed(const std::string& text) {
    source_ = TargetSource::FromText(text, options_.source);
    return RequestFeed(&options_, source_.get(), nullptr, &shared_, &client_, 1);
  }

  LoadOptions options_;
  SharedRunState shared_;
  net::EventLoop loop_;
  net::Resolver resolver_;
  http::HttpClient client_;
  std::unique_ptr<TargetSource> source_;
};

TEST_F(RequestFeedTest, RepeatedLineStaysCachedWhileDistinctLinesStreamBy) {
  const std::string hot = "http://127.0.0.1:1/hot";
  std::string text;
  for (int i = 0; i < 200; ++i)
    text += hot + "\nhttp://127.0.0.1:1/item/" + std::to_string(i) + "\n";
  RequestFeed feed = Feed(text);
  PreparedRequest scratch;
  const PreparedRequest* hot_request = nullptr;
  int requests = 0;
  int hot_sightings = 0;
  while (const PreparedRequest* r = feed.Next(&scratch)) {
    ++requests;
    if (r->key == hot) {
      // Prepared into the scratch request when first seen, cached from the second sighting on.
      if (++hot_sightings == 1) {
        EXPECT_EQ(r, &scratch) << "a line seen once was admitted into the cache";
        continue;
      }
      EXPECT_NE(r, &scratch) << "a repeated line was not cached";
      if (hot_request == nullptr) hot_request = r;
      EXPECT_EQ(r, hot_request) << "the repeated line was evicted and prepared again";
    } else {
      EXPECT_EQ(r, &scratch) << "a line seen once was admitted into the cache";
      EXPECT_EQ(r->key.rfind("http://127.0.0.1:1/item/", 0), 0u) << r->key;
    }
  }
  EXPECT_EQ(requests, 400);
  EXPECT_EQ(hot_sightings, 200);
}

TEST_F(RequestFeedTest, RequestsInFlightAreNeverReused) {
  // Every line twice in a row: the second sighting is the one admitted into the cache.
  std::string text;
  for (int i = 0; i < 50; ++i) {
    const std::string line = "http://127.0.0.1:1/item/" + std::to_string(i) + "\n";
    text += line + line;
  }
  RequestFeed feed = Feed(text);
  PreparedRequest scratch;
  // The first four lines fill the cache and stay in flight: every later line must use the
  // scratch request, and the four keep their lines.
  const PreparedRequest* held[4];
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(feed.Next(&scratch), &scratch);
    held[i] = feed.Next(&scratch);
    ASSERT_NE(held[i], nullptr);
    ASSERT_NE(held[i], &scratch);
    ++held[i]->in_flight;
  }
  for (int i = 8; i < 100; ++i) {
    const PreparedRequest* r = feed.Next(&scratch);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r, &scratch);
    EXPECT_EQ(r->key, "http://127.0.0.1:1/item/" + std::to_string(i / 2));
  }
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(held[i]->key, "http://127.0.0.1:1/item/" + std::to_string(i));
  EXPECT_EQ(feed.Next(&scratch), nullptr);
}

// All-distinct input: no line is admitted, and after max_prepared_targets new lines in a row
// lines skip the lookup (the scratch request); a line that repeats is cached once probes see it
// twice.
TEST_F(RequestFeedTest, DistinctStreamBypassesTheCacheUntilALineRepeats) {
  std::string text;
  for (int i = 0; i < 100; ++i)
    text += "http://127.0.0.1:1/item/" + std::to_string(i) + "\n";
  const std::string hot = "http://127.0.0.1:1/hot";
  for (int i = 0; i < 1000; ++i)
    text += hot + "\n";
  RequestFeed feed = Feed(text);
  PreparedRequest scratch;
  int from_scratch = 0;
  for (int i = 0; i < 100; ++i) {
    const PreparedRequest* r = feed.Next(&scratch);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->key, "http://127.0.0.1:1/item/" + std::to_string(i));
    from_scratch += r == &scratch;
  }
  EXPECT_EQ(from_scratch, 100) << "a line seen once was admitted into the cache";
  const PreparedRequest* last = nullptr;
  int cached_in_a_row = 0;
  for (int i = 0; i < 1000; ++i) {
    const PreparedRequest* r = feed.Next(&scratch);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->key, hot);
    cached_in_a_row = r != &scratch && r == last ? cached_in_a_row + 1 : 0;
    last = r;
  }
  EXPECT_GT(cached_in_a_row, 500) << "the repeated line never became cached again";
  EXPECT_EQ(feed.Next(&scratch), nullptr);
}

// A cycle of distinct lines 1.25 times the cache's capacity: admitting every line seen before
// evicts lines just before their next use, and lines sharing a fingerprint slot erase each other
// and are never admitted (about 67 % hits in the later passes). 80 % of the cycle fits, and the
// later passes must hit for at least 75 %: a hit is the request the line got last time, not the
// scratch one, and not given to another line since.
TEST_F(RequestFeedTest, CycleLargerThanTheCacheStillHits) {
  options_.max_prepared_targets = 1024;
  constexpr int kLines = 1280;
  constexpr int kPasses = 20;
  auto url = [](int i) {
    return "http://127.0.0.1:1/item/" + std::to_string(i) + "?ref=" + std::to_string(i * 7919);
  };
  std::string text;
  for (int pass = 0; pass < kPasses; ++pass)
    for (int i = 0; i < kLines; ++i)
      text += url(i) + "\n";
  RequestFeed feed = Feed(text);
  PreparedRequest scratch;
  std::vector<const PreparedRequest*> last(kLines, nullptr);
  std::unordered_map<const PreparedRequest*, int> line_of;  // the line each request served last
  int late_requests = 0;
  int late_hits = 0;
  for (int pass = 0; pass < kPasses; ++pass) {
    for (int i = 0; i < kLines; ++i) {
      const PreparedRequest* r = feed.Next(&scratch);
      ASSERT_NE(r, nullptr);
      EXPECT_EQ(r->key, url(i));
      const bool hit = r != &scratch && r == last[i] && line_of[r] == i;
      if (pass >= kPasses / 2) {
        ++late_requests;
        late_hits += hit;
      }
      last[i] = r;
      if (r != &scratch) line_of[r] = i;
    }
  }
  EXPECT_EQ(feed.Next(&scratch), nullptr);
  EXPECT_GE(late_hits * 100, late_requests * 75)
      << late_hits << " hits of " << late_requests << " requests in the later passes";
}

// Lines on one origin get their heads from the last one's with the target replaced: every
// request must be exactly what PrepareRequest makes for its line, whatever changes between
// lines (origin, port, scheme, IPv6 literal, method, a query-only target, an invalid line).
TEST_F(RequestFeedTest, RequestsFromTheLastHeadEqualFullyPreparedOnes) {
  options_.headers = {{"X-Trace", "1"}, {"Content-Type", "application/grpc"}};
  options_.body = "payload";
  const std::vector<std::pair<std::string, std::string>> lines = {
      {"GET", "http://127.0.0.1:1/item/1?ref=2"}, {"GET", "http://127.0.0.1:1/item/2"},
      {"POST", "http://127.0.0.1:1/item/3"},      {"POST", "http://127.0.0.1:1/item/4"},
      {"GET", "http://127.0.0.1:2/item/5"},       {"GET", "https://127.0.0.1:2/item/6"},
      {"GET", "http://[::1]:2/item/7"},           {"GET", "http://[::1]:2?q=8"},
      {"GET", "http://127.0.0.1:80/item/9"},      {"GET", "http://127.0.0.1/item/10"},
      {"GET", "http://localhost/item/11"},        {"GET", "http://localhost/item/12"}};
  std::string text;
  for (const auto& [method, url] : lines)
    text += (method == "GET" ? "" : method + " ") + url + "\nhttp://127.0.0.1 bad/\n";
  RequestFeed feed = Feed(text);
  PreparedRequest scratch;
  for (const auto& [method, url] : lines) {
    const PreparedRequest* r = feed.Next(&scratch);
    ASSERT_NE(r, nullptr);
    Result<http::Url> parsed = http::ParseUrl(url);
    ASSERT_TRUE(parsed.ok()) << url;
    PreparedRequest expected;
    PrepareRequest(method, *parsed, options_.headers, options_.body, &client_, &expected);
    EXPECT_FALSE(r->invalid) << url;
    EXPECT_EQ(r->head, expected.head) << url;
    EXPECT_EQ(r->method, expected.method) << url;
    EXPECT_EQ(r->url, expected.url) << url;
    EXPECT_EQ(r->origin, expected.origin) << url;
    EXPECT_EQ(r->body, expected.body) << url;
    EXPECT_EQ(r->idempotent, expected.idempotent) << url;
    EXPECT_EQ(r->grpc, expected.grpc) << url;
    const PreparedRequest* bad = feed.Next(&scratch);
    ASSERT_NE(bad, nullptr);
    EXPECT_TRUE(bad->invalid);
  }
  EXPECT_EQ(feed.Next(&scratch), nullptr);
}

}  // namespace
}  // namespace hammer::load
