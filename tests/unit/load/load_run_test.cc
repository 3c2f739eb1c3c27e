// RunLoad end to end, in process: real worker threads and a real `hammer serve` on loopback
// (port 0), an input of known lines, and the records written to a temporary file.
#include "hammer/load/load_run.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "hammer/base/clock.h"
#include "hammer/load/body_matcher.h"
#include "hammer/net/socket.h"
#include "hammer/serve/serve_group.h"
#include "hammer/stats/threshold.h"

namespace hammer::load {
namespace {

// A LoadInput over fixed URL-list text.
LoadInput Lines(std::string text, const SourceOptions& options) {
  LoadInput input;
  input.lines = TargetSource::FromText(std::move(text), options);
  return input;
}

// A file in /tmp that records are written to; removed with the test.
class RecordsFile {
 public:
  RecordsFile() {
    char name[] = "/tmp/hammer_records_XXXXXX";
    fd_ = mkstemp(name);
    EXPECT_GE(fd_, 0);
    path_ = name;
  }
  ~RecordsFile() {
    close(fd_);
    unlink(path_.c_str());
  }
  int fd() const { return fd_; }

  std::vector<std::string> Lines() const {
    std::string text;
    char buf[65536];
    ssize_t n;
    off_t at = 0;
    while ((n = pread(fd_, buf, sizeof(buf), at)) > 0) {
      text.append(buf, static_cast<size_t>(n));
      at += n;
    }
    EXPECT_TRUE(text.empty() || text.back() == '\n') << "records end mid-line";
    std::vector<std::string> lines;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line))
      lines.push_back(line);
    return lines;
  }

 private:
  int fd_ = -1;
  std::string path_;
};

struct RecordCounts {
  std::map<std::string, int> successes;
  std::map<std::string, int> failures;
  int malformed = 0;
};

// Checks each record's format ("KEY\tS.UUUUUU" or "KEY\t") and counts them by key.
RecordCounts CountRecords(const std::vector<std::string>& lines) {
  static const std::regex kSuccess("^([^\t]+)\t([0-9]+)\\.([0-9]{6})$");
  static const std::regex kFailure("^([^\t]+)\t$");
  RecordCounts counts;
  for (const std::string& line : lines) {
    std::smatch m;
    if (std::regex_match(line, m, kSuccess)) {
      ++counts.successes[m[1]];
      EXPECT_LT(std::stoi(m[2]), 10) << "implausible latency: " << line;
    } else if (std::regex_match(line, m, kFailure)) {
      ++counts.failures[m[1]];
    } else {
      ++counts.malformed;
      ADD_FAILURE() << "malformed record: '" << line << "'";
    }
  }
  return counts;
}

class LoadRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    serve::ServeOptions options;
    options.listen = "127.0.0.1:0";
    options.threads = 1;
    Result<std::unique_ptr<serve::TargetServerGroup>> server =
        serve::TargetServerGroup::Start(options);
    ASSERT_TRUE(server.ok()) << server.status().message();
    server_ = std::move(*server);
    // A bound socket that never listens: connections to its port are refused.
    closed_ = net::Fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    Result<net::SocketAddress> any = net::SocketAddress::Parse("127.0.0.1:0");
    ASSERT_TRUE(any.ok());
    ASSERT_EQ(bind(closed_.get(), any->sockaddr_ptr(), any->length()), 0);
    Result<net::SocketAddress> closed = net::LocalAddress(closed_.get());
    ASSERT_TRUE(closed.ok());
    closed_url_ = "http://" + closed->ToString() + "/";
  }

  std::string Url(std::string_view path) const {
    return "http://" + server_->address().ToString() + std::string(path);
  }

  LoadOptions Options(int threads, int concurrency) const {
    LoadOptions options;
    options.threads = threads;
    options.concurrency = concurrency;
    options.timeout = 5 * kSecond;
    options.connect_timeout = 2 * kSecond;
    options.duration = 30 * kSecond;  // safety net only: every run here ends with its input
    Result<std::shared_ptr<const re2::RE2>> pattern = CompileErrorPattern(kSeedErrorPattern);
    EXPECT_TRUE(pattern.ok());
    options.error_pattern = *pattern;
    return options;
  }

  // 30x "/", 10x "/status/500", 5x "/error-content", 3x an ftp:// URL, 2x a closed port,
  // interleaved, with comments and blank lines (which are not requests).
  std::string MixedInput() const {
    std::string text = "# a hammer input\n\n";
    for (int i = 0; i < 30; ++i) {
      text += Url("/") + "\n";
      if (i < 10) text += Url("/status/500") + "\n";
      if (i < 5) text += Url("/error-content") + "\n";
      if (i < 3) text += "ftp://127.0.0.1/file\n";
      if (i < 2) text += closed_url_ + "\n";
      if (i % 10 == 0) text += "# comment\n   \n";
    }
    return text;
  }

  void ExpectMixedTotals(const LoadSummary& summary, const RecordsFile& records) {
    EXPECT_FALSE(summary.interrupted);
    EXPECT_LT(summary.seconds, 10.0);  // ended with its input, not at the safety-net duration
    EXPECT_EQ(summary.succeeded, 30u);
    EXPECT_EQ(summary.failed, 20u);
    EXPECT_EQ(summary.requests(), 50u);
    EXPECT_EQ(summary.total.count, 30u);
    EXPECT_EQ(summary.total.errors, 20u);
    FailureCounts expected_failures;
    expected_failures.Add(Failure::kHttp5xx, 10);
    expected_failures.Add(Failure::kErrorlikeContent, 5);
    expected_failures.Add(Failure::kInvalidUrl, 3);
    expected_failures.Add(Failure::kConnect, 2);
    EXPECT_EQ(summary.total.failures.counts(), expected_failures);

    std::map<std::string, std::pair<uint64_t, uint64_t>> by_key;  // key -> (count, errors)
    for (const auto& [key, stats] : summary.keys)
      by_key[key] = {stats.count, stats.errors};
    std::map<std::string, std::pair<uint64_t, uint64_t>> expected_keys = {
        {Url("/"), {30, 0}},
        {Url("/status/500"), {0, 10}},
        {Url("/error-content"), {0, 5}},
        {"ftp://127.0.0.1/file", {0, 3}},
        {closed_url_, {0, 2}}};
    EXPECT_EQ(by_key, expected_keys);

    std::vector<std::string> lines = records.Lines();
    EXPECT_EQ(lines.size(), 50u);  // exactly one record per request
    RecordCounts counts = CountRecords(lines);
    EXPECT_EQ(counts.malformed, 0);
    EXPECT_EQ(counts.successes, (std::map<std::string, int>{{Url("/"), 30}}));
    EXPECT_EQ(counts.failures, (std::map<std::string, int>{{Url("/status/500"), 10},
                                                           {Url("/error-content"), 5},
                                                           {"ftp://127.0.0.1/file", 3},
                                                           {closed_url_, 2}}));
    // The server saw every sendable request: 30 + 10 + 5.
    EXPECT_EQ(server_->counts().requests(), 45u);
  }

  std::unique_ptr<serve::TargetServerGroup> server_;
  net::Fd closed_;
  std::string closed_url_;
};

TEST_F(LoadRunTest, CountsEveryRequestByKeyAndFailureType) {
  RecordsFile records;
  Result<LoadSummary> summary = RunLoad(Options(1, 4), Lines(MixedInput(), {}), records.fd(), {});
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  ExpectMixedTotals(*summary, records);
  EXPECT_FALSE(summary->open_loop);
  EXPECT_EQ(summary->concurrency, 4);
}

TEST_F(LoadRunTest, TwoThreadsGiveTheSameTotals) {
  RecordsFile records;
  Result<LoadSummary> summary = RunLoad(Options(2, 4), Lines(MixedInput(), {}), records.fd(), {});
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  ExpectMixedTotals(*summary, records);
}

// The summary's clock: started_at, then ended_at (the last worker's last response), both within
// the call, and the seconds between them, over 2,000 keys.
TEST_F(LoadRunTest, TheRunIsTimedFromItsStartToItsLastResponse) {
  std::string input;
  for (int i = 0; i < 2000; ++i)
    input += Url("/item/" + std::to_string(i)) + "\n";
  RecordsFile records;
  const int64_t before = WallNowMicros();
  Result<LoadSummary> summary = RunLoad(Options(2, 20), Lines(input, {}), records.fd(), {});
  const int64_t after = WallNowMicros();
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ(summary->requests(), 2000u);
  EXPECT_EQ(summary->keys.size(), 2000u);
  EXPECT_LE(before, summary->wall_start_us);
  EXPECT_LT(summary->wall_start_us, summary->wall_end_us);
  EXPECT_LE(summary->wall_end_us, after);
  EXPECT_NEAR(static_cast<double>(summary->wall_end_us - summary->wall_start_us),
              summary->seconds * 1e6, 1.0);
}

// Once the input has run out, a connection is closed as its last response comes, not with the
// others after the run's last response: while the slow request is still being answered, the
// server holds only its connection.
TEST_F(LoadRunTest, ConnectionsCloseAsTheInputRunsOut) {
  const std::string input =
      Url("/delay/2000") + "\n" + Url("/") + "\n" + Url("/") + "\n" + Url("/") + "\n";
  RecordsFile records;
  std::optional<Result<LoadSummary>> summary;
  std::thread run(
      [&] { summary.emplace(RunLoad(Options(1, 4), Lines(input, {}), records.fd(), {})); });
  // Polled until the slow answer is due at the earliest (it keeps its connection until then).
  const MonoNanos deadline = MonoNow() + 1500 * kMillisecond;
  size_t open = 0;
  while (MonoNow() < deadline) {
    open = server_->resources().open_connections();
    if (server_->counts().requests() == 4 && open == 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  run.join();
  EXPECT_EQ(open, 1u);
  ASSERT_TRUE(summary.has_value() && summary->ok()) << summary->status().message();
  EXPECT_EQ((*summary)->succeeded, 4u);
  EXPECT_EQ((*summary)->counters.connections_opened, 4u);  // one each, none opened again
  EXPECT_EQ(records.Lines().size(), 4u);
}

TEST_F(LoadRunTest, FailureExamplesNameKeyAndReason) {
  RecordsFile records;
  Result<LoadSummary> summary = RunLoad(Options(1, 1), Lines(MixedInput(), {}), records.fd(), {});
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  const auto& http5xx = summary->failure_examples[static_cast<size_t>(Failure::kHttp5xx)];
  EXPECT_EQ(http5xx, (std::vector<std::string>{Url("/status/500") + ": HTTP 500"}));
  const auto& connect = summary->failure_examples[static_cast<size_t>(Failure::kConnect)];
  ASSERT_EQ(connect.size(), 1u);
  EXPECT_EQ(connect[0].rfind(closed_url_ + ": connect ", 0), 0u) << connect[0];
}

TEST_F(LoadRunTest, MaxRequestsIsExactWithLoop) {
  for (int threads : {1, 2}) {
    RecordsFile records;
    LoadOptions options = Options(threads, 6);
    options.max_requests = 37;
    options.source.loop = true;
    std::string input = "# looped\n" + Url("/") + "\n" + Url("/status/404") + "\n\n";
    Result<LoadSummary> summary = RunLoad(options, Lines(input, options.source), records.fd(), {});
    ASSERT_TRUE(summary.ok()) << summary.status().message();
    EXPECT_EQ(summary->requests(), 37u) << threads << " threads";
    EXPECT_EQ(summary->succeeded + summary->failed, 37u);
    EXPECT_EQ(summary->total.failures.Get(Failure::kHttp4xx), summary->failed);
    // Lines alternate; with several slots the split between the two may vary by a few.
    EXPECT_GE(summary->succeeded, 15u);
    EXPECT_GE(summary->failed, 15u);
    EXPECT_EQ(records.Lines().size(), 37u) << threads << " threads";
    EXPECT_EQ(CountRecords(records.Lines()).malformed, 0);
  }
}

TEST_F(LoadRunTest, MaxRequestsCountsInvalidLinesToo) {
  RecordsFile records;
  LoadOptions options = Options(1, 2);
  options.max_requests = 10;
  options.source.loop = true;
  Result<LoadSummary> summary =
      RunLoad(options, Lines("not a url\n" + Url("/") + "\n", options.source), records.fd(), {});
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->requests(), 10u);
  EXPECT_EQ(summary->succeeded, 5u);
  EXPECT_EQ(summary->total.failures.Get(Failure::kInvalidUrl), 5u);
  EXPECT_EQ(records.Lines().size(), 10u);
}

// More invalid lines in a row than a worker handles per turn (it yields to its loop after
// 256), at the end of the input: the run must still end when the input does.
TEST_F(LoadRunTest, LongRunOfInvalidLinesAtTheEndFinishes) {
  std::string input = Url("/") + "\n";
  for (int i = 0; i < 300; ++i)
    input += "ftp://127.0.0.1/" + std::to_string(i) + "\n";
  RecordsFile records;
  LoadOptions options = Options(1, 1);
  options.duration = 5 * kSecond;  // the safety net, for this test's known failure mode
  Result<LoadSummary> summary = RunLoad(options, Lines(input, {}), records.fd(), {});
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->succeeded, 1u);
  EXPECT_EQ(summary->total.failures.Get(Failure::kInvalidUrl), 300u);
  EXPECT_EQ(records.Lines().size(), 301u);
  EXPECT_LT(summary->seconds, 4.0) << "the run only ended at its --duration";
}

TEST_F(LoadRunTest, InputOfOnlyCommentsWithLoopEnds) {
  RecordsFile records;
  LoadOptions options = Options(1, 2);
  options.source.loop = true;
  Result<LoadSummary> summary =
      RunLoad(options, Lines("# nothing\n\n# to send\n", options.source), records.fd(), {});
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->requests(), 0u);
  EXPECT_LT(summary->seconds, 10.0);
  EXPECT_TRUE(records.Lines().empty());
}

TEST_F(LoadRunTest, EmitNoneWritesNoRecords) {
  RecordsFile records;
  LoadOptions options = Options(1, 3);
  options.emit = EmitMode::kNone;
  Result<LoadSummary> summary = RunLoad(options, Lines(MixedInput(), {}), records.fd(), {});
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->requests(), 50u);
  EXPECT_TRUE(records.Lines().empty());
}

// More distinct URLs than --max-keys: the summary groups them by path template, its rows
// still add up to the total, and every record keeps its exact URL.
TEST_F(LoadRunTest, MaxKeysGroupsDistinctUrlsByTemplateAndRecordsStayExact) {
  for (int threads : {1, 2}) {
    std::string input;
    for (int i = 0; i < 60; ++i)
      input += Url("/item/" + std::to_string(1000 + i) + "?ref=r" + std::to_string(i)) + "\n";
    for (int i = 0; i < 5; ++i)
      input += Url("/status/500") + "\n";
    RecordsFile records;
    LoadOptions options = Options(threads, 3);
    options.max_keys = 10;
    Result<LoadSummary> summary = RunLoad(options, Lines(input, {}), records.fd(), {});
    ASSERT_TRUE(summary.ok()) << summary.status().message();
    EXPECT_EQ(summary->requests(), 65u);
    std::map<std::string, std::pair<uint64_t, uint64_t>> by_key;  // key -> (count, errors)
    uint64_t rows_total = 0;
    for (const auto& [key, stats] : summary->keys) {
      by_key[key] = {stats.count, stats.errors};
      rows_total += stats.total();
    }
    EXPECT_EQ(by_key, (std::map<std::string, std::pair<uint64_t, uint64_t>>{
                          {Url("/item/{id}?ref={id}"), {60, 0}}, {Url("/status/{id}"), {0, 5}}}))
        << threads << " threads";
    EXPECT_EQ(rows_total, summary->total.total());
    EXPECT_EQ(summary->total.histogram.total_count(), 60u);
    EXPECT_TRUE(summary->key_folding.folded);
    EXPECT_EQ(summary->key_folding.rows, 2u);
    // HyperLogLog estimate of 61 distinct keys: exact-looking at this size.
    EXPECT_NEAR(static_cast<double>(summary->key_folding.distinct_keys), 61.0, 2.0);
    RecordCounts counts = CountRecords(records.Lines());
    EXPECT_EQ(counts.successes.size(), 60u);  // one record key per distinct URL
    EXPECT_EQ(counts.successes.count(Url("/item/1007?ref=r7")), 1u);
  }
}

// Threshold rules (stats/threshold.h) judge a load run through LoadSummary::threshold_inputs().
stats::KeyStats ThresholdStats(const std::vector<int64_t>& micros, uint64_t errors) {
  stats::KeyStats stats;
  for (int64_t v : micros)
    stats.RecordSuccess(v);
  for (uint64_t i = 0; i < errors; ++i)
    stats.RecordFailure(std::nullopt);
  return stats;
}

stats::Threshold ParseThresholdOk(std::string_view text) {
  Result<stats::Threshold> t = stats::ParseThreshold(text);
  EXPECT_TRUE(t.ok()) << text << ": " << t.status().message();
  return t.ok() ? *t : stats::Threshold();
}

TEST(LoadSummaryTest, ThresholdInputs) {
  LoadSummary summary;
  summary.seconds = 2;
  summary.total = ThresholdStats({1000, 2000}, 2);
  summary.keys.emplace_back("k", ThresholdStats({1000}, 0));
  stats::ThresholdInputs inputs = summary.threshold_inputs();
  std::vector<stats::ThresholdResult> results = stats::EvaluateThresholds(
      {ParseThresholdOk("rps>=2"), ParseThresholdOk("errors<=2"), ParseThresholdOk("max<=1ms@k")},
      inputs);
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].message, "rps = 2.0, limit >= 2");
  EXPECT_TRUE(stats::AllPassed(results));
}

}  // namespace
}  // namespace hammer::load
