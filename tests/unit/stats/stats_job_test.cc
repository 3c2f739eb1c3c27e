#include "hammer/stats/stats_job.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "hammer/stats/partial.h"
#include "hammer/stats/record.h"

namespace hammer::stats {
namespace {

class StatsJobTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& content) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }

  // Runs a job over `inputs` and returns its output.
  std::string Run(StatsJobOptions options, const std::vector<std::string>& inputs,
                  StatsJobSummary* summary = nullptr) {
    std::string out_path = dir_ + "/out";
    int fd = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    EXPECT_GE(fd, 0);
    StatsJob job(options);
    EXPECT_TRUE(job.Open(inputs).ok());
    Result<StatsJobSummary> result = job.Run(fd);
    close(fd);
    EXPECT_TRUE(result.ok()) << result.status().message();
    if (summary != nullptr && result.ok()) *summary = *result;
    std::stringstream content;
    content << std::ifstream(out_path, std::ios::binary).rdbuf();
    return content.str();
  }

  void SetUp() override {
    char pattern[] = "/tmp/stats_job_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string dir_;
};

// Many keys: the encoder thread's batches and its bounded queue keep every key, in order, with
// the figures of a one-key-at-a-time run.
TEST_F(StatsJobTest, ReducerWritesManyKeysInInputOrder) {
  std::string input;
  constexpr int kKeys = 1000;
  for (int k = 0; k < kKeys; ++k) {
    char key[16];
    std::snprintf(key, sizeof(key), "k%05d", k);
    for (int i = 1; i <= 3; ++i)
      input += std::string(key) + "\t0.00" + std::to_string(i) + "\n";
  }
  std::string path = Write("many", input);
  StatsJobSummary summary;
  std::string out = Run({}, {path}, &summary);
  EXPECT_EQ(summary.keys, static_cast<uint64_t>(kKeys));
  std::istringstream lines(out);
  std::string line;
  int k = 0;
  while (std::getline(lines, line)) {
    char key[16];
    std::snprintf(key, sizeof(key), "k%05d", k++);
    ASSERT_EQ(line.substr(0, line.find('\t')), key);
    EXPECT_EQ(line.substr(line.find('\t'), 27), "\t0.006000\t0.002000\t0.003000");
  }
  EXPECT_EQ(k, kKeys);
}

TEST_F(StatsJobTest, ReducerOverSeveralFiles) {
  std::string a = Write("a", "u\t0.001\nv\t\nbroken\n");
  std::string b = Write("b", "u\t0.003\nw\t1.0e-05");  // no final newline
  StatsJobSummary summary;
  std::string out = Run({}, {a, b}, &summary);
  EXPECT_EQ(summary.lines, 5u);
  EXPECT_EQ(summary.keys, 3u);
  EXPECT_EQ(summary.malformed, 1u);
  EXPECT_EQ(summary.first_malformed, a + ":3: no TAB between key and value");
  EXPECT_EQ(
      summary.StderrText(),
      "reporter:counter:stats,malformed,1\nhammer stats: skipped 1 malformed line (first at " + a +
          ":3: no TAB between key and value)\n");
  // b's u arrives after v: unsorted, detected, aggregated, written sorted.
  const std::string u_line = "u\t0.004000\t0.002000\t0.003000\t0.001000\t0\t2\t";
  EXPECT_EQ(out.substr(0, u_line.size()), u_line);
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 3);
}

TEST_F(StatsJobTest, CombineThenReportEveryMode) {
  std::string records = Write("r", "k\t0.010\nk\t0.020\nk\t\nj\t0.5\n");
  StatsJobOptions combine;
  combine.mode = StatsMode::kCombine;
  std::string partial_lines = Run(combine, {records});
  EXPECT_EQ(partial_lines.substr(0, 6), "j\t#hp1");
  std::string partials = Write("p", partial_lines);

  StatsJobOptions reducer;
  EXPECT_EQ(Run(reducer, {partials}), Run(reducer, {records}));

  StatsJobOptions csv;
  csv.mode = StatsMode::kCsv;
  std::string csv_out = Run(csv, {partials});
  EXPECT_EQ(csv_out.substr(0, csv_out.find('\n')),
            "key,sum,average,max,min,errors,count,p50,p90,p99,p99.9,histogram");
  // Reducer output converts to the same CSV as the records it came from.
  std::string reduced = Write("reduced", Run(reducer, {records}));
  EXPECT_EQ(Run(csv, {reduced}), csv_out);

  StatsJobOptions table;
  table.mode = StatsMode::kTable;
  std::string table_out = Run(table, {partials, records});
  EXPECT_NE(table_out.find("TOTAL         8   6       2"), std::string::npos) << table_out;

  StatsJobOptions json;
  json.mode = StatsMode::kJson;
  json.only_key = "k";
  std::string json_out = Run(json, {records});
  EXPECT_NE(json_out.find("\"key\":\"k\""), std::string::npos);
  EXPECT_EQ(json_out.find("\"key\":\"j\""), std::string::npos);

  StatsJobOptions hdr;
  hdr.mode = StatsMode::kHdr;
  hdr.only_key = "j";
  std::string hdr_out = Run(hdr, {records});
  EXPECT_EQ(hdr_out.substr(0, 20), "       Value     Per");
  EXPECT_NE(hdr_out.find(" 500.223 1.000000000000          1\n"), std::string::npos) << hdr_out;
}

TEST_F(StatsJobTest, TableMentionsMalformedLines) {
  std::string input =
      Write("in", "k\t0.001\nk\tbad\n" + std::string(kMaxLineBytes + 10, 'x') + "\n");
  StatsJobOptions table;
  table.mode = StatsMode::kTable;
  StatsJobSummary summary;
  std::string out = Run(table, {input}, &summary);
  EXPECT_NE(out.find("2 malformed input lines skipped (first at " + input +
                     ":2: value is not a non-negative number of seconds)"),
            std::string::npos)
      << out;
  EXPECT_EQ(summary.StderrText(), "reporter:counter:stats,malformed,2\n");
}

TEST_F(StatsJobTest, UnopenableInputIsAnError) {
  StatsJob job({});
  Status status = job.Open({dir_ + "/missing"});
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "open " + dir_ + "/missing: No such file or directory");
}

TEST_F(StatsJobTest, HtmlAndHdrLogFilesAlongsideAMode) {
  std::string records = Write("r",
                              "k\t0.010\t1764428700100\n"
                              "k\t\t1764428701100\n"
                              "k<b>\t0.002\t1764428702100\n"
                              "old\t0.5\n");  // no timestamp: in the figures, not over time
  StatsJobOptions options;
  options.html_path = dir_ + "/report.html";
  options.hdr_log_path = dir_ + "/log.hlog";
  options.html_title = "my <run>";
  StatsJobSummary summary;
  std::string out = Run(options, {records}, &summary);
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 3);  // the reducer's lines still stream
  EXPECT_EQ(summary.timestamped, 3u);
  EXPECT_EQ(summary.StderrText(), "");

  std::stringstream html;
  html << std::ifstream(dir_ + "/report.html").rdbuf();
  EXPECT_NE(html.str().find("<title>my &lt;run&gt;</title>"), std::string::npos);
  EXPECT_NE(html.str().find("k&lt;b&gt;"), std::string::npos);
  EXPECT_NE(html.str().find("id=\"chart-throughput\""), std::string::npos);
  EXPECT_NE(html.str().find("Covers the 3 of 4 requests"), std::string::npos);
  std::stringstream log;
  log << std::ifstream(dir_ + "/log.hlog").rdbuf();
  EXPECT_NE(log.str().find("\n0.000,1.000,10.007,HISTFAAA"), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("\n2.000,1.000,2.000,HISTFAAA"), std::string::npos) << log.str();
}

TEST_F(StatsJobTest, FilesAloneWriteNothingElse) {
  std::string records = Write("r", "k\t0.010\nj\t\n");
  StatsJobOptions options;
  options.mode = StatsMode::kNone;
  options.html_path = dir_ + "/report.html";
  options.hdr_log_path = dir_ + "/log.hlog";
  options.only_key = "k";
  StatsJobSummary summary;
  EXPECT_EQ(Run(options, {records}, &summary), "");
  EXPECT_EQ(summary.keys, 1u);
  EXPECT_EQ(summary.StderrText(),
            "hammer stats: no record carries a timestamp; the HdrHistogram log has no "
            "intervals\n");
  std::stringstream html;
  html << std::ifstream(dir_ + "/report.html").rdbuf();
  EXPECT_NE(html.str().find("No record carries a timestamp"), std::string::npos);
  EXPECT_EQ(html.str().find(">j<"), std::string::npos);
}

TEST_F(StatsJobTest, UnwritableHtmlPathFailsAtOpen) {
  StatsJobOptions options;
  options.html_path = dir_ + "/no/such/dir/report.html";
  StatsJob job(options);
  Status status = job.Open({});
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("--html: cannot write '" + dir_ + "/no/such/dir/report.html'"),
            std::string::npos);
}

// Partials of two attempts of one task (Hadoop's _0 and its retry _1, 50 requests each) reduce
// to one attempt's figures, in every mode; --combine passes the kept attempt's lines on as they
// are, so that a later stage still meets only one attempt.
TEST_F(StatsJobTest, TwoAttemptsOfATaskCountOnce) {
  auto attempt = [](std::string_view name, int64_t started_ms, int64_t micros) {
    std::string lines;
    for (std::string_view key : {"/a", "/b"}) {
      KeyStats stats;
      for (int i = 0; i < 50; ++i)
        stats.RecordSuccess(micros);
      AppendPartialRecord(
          lines, key, stats,
          {.task = "task_1_0001_m_000000", .attempt = name, .started_ms = started_ms, .lines = 2});
    }
    return lines;
  };
  const std::string first = attempt("attempt_1_0001_m_000000_0", 1000, 1000);
  const std::string second = attempt("attempt_1_0001_m_000000_1", 2000, 3000);
  const std::string both = Write("both", first + second);
  const std::string kept = Write("kept", second);

  StatsJobOptions reducer;
  StatsJobSummary summary;
  const std::string reduced = Run(reducer, {both}, &summary);
  EXPECT_EQ(reduced, Run(reducer, {kept}));
  EXPECT_NE(reduced.find("/a\t0.150000\t0.003000\t"), std::string::npos) << reduced;
  EXPECT_EQ(summary.attempts.tasks, 1u);
  EXPECT_EQ(summary.attempts.attempts_dropped, 1u);
  EXPECT_EQ(summary.attempts.lines_dropped, 2u);
  EXPECT_NE(summary.StderrText().find("dropped 1 attempt (2 partial lines)"), std::string::npos)
      << summary.StderrText();

  StatsJobOptions combine;
  combine.mode = StatsMode::kCombine;
  EXPECT_EQ(Run(combine, {both}), second);

  StatsJobOptions table;
  table.mode = StatsMode::kTable;
  // Inside a Hadoop task the shuffle carries one attempt: #ha1 lines are merged as they come.
  StatsJobOptions in_hadoop;
  in_hadoop.select_attempts = false;
  const std::string streamed = Run(in_hadoop, {both}, &summary);
  EXPECT_NE(streamed.find("/a\t0.200000\t0.002000\t"), std::string::npos) << streamed;
  EXPECT_EQ(summary.attempts.tasks, 0u);

  const std::string table_out = Run(table, {both, kept});
  EXPECT_NE(table_out.find("TOTAL       100  100       0   3.000"), std::string::npos) << table_out;
}

// --- thresholds on the merge -------------------------------------------------------------

// The partials of one mapper: `fast` requests of 1 ms and `slow` of 300 ms to /a, `failed`
// failures of /b.
std::string MapperPartials(int fast, int slow, int failed) {
  KeyStats a, b;
  for (int i = 0; i < fast; ++i)
    a.RecordSuccess(1000);
  for (int i = 0; i < slow; ++i)
    a.RecordSuccess(300000);
  for (int i = 0; i < failed; ++i)
    b.RecordFailure(Failure::kHttp5xx);
  std::string lines;
  AppendPartialRecord(lines, "/a", a);
  if (failed > 0) AppendPartialRecord(lines, "/b", b);
  return lines;
}

StatsJobOptions Judging(std::initializer_list<const char*> rules, StatsMode mode) {
  StatsJobOptions options;
  options.mode = mode;
  for (const char* rule : rules) {
    Result<Threshold> t = ParseThreshold(rule, ThresholdSubject::kMerged);
    EXPECT_TRUE(t.ok()) << rule;
    if (t.ok()) options.thresholds.push_back(*t);
  }
  return options;
}

// Four mappers, each passing alone: the slow requests are all on the fourth, whose p99 alone
// fails, and each mapper's 3 failures pass errors<=10 while the merge's 12 do not. A verdict per
// machine would pass the run (the first mapper) or fail it for the wrong figure; the merge gives
// the run's own.
TEST_F(StatsJobTest, ThresholdsJudgeTheExactMerge) {
  std::vector<std::string> parts;
  for (int m = 0; m < 4; ++m) {
    parts.push_back(
        Write("part-" + std::to_string(m), MapperPartials(m < 3 ? 100 : 70, m < 3 ? 0 : 30, 3)));
  }
  StatsJobOptions options = Judging({"p99<250ms", "errors<=10", "p50<=1ms@/a"}, StatsMode::kNone);

  StatsJobSummary alone;
  Run(options, {parts[0]}, &alone);
  ASSERT_EQ(alone.thresholds.size(), 3u);
  EXPECT_TRUE(AllPassed(alone.thresholds)) << alone.thresholds[0].message;
  EXPECT_EQ(alone.thresholds[1].message, "errors = 3, limit <= 10");

  StatsJobSummary merged;
  Run(options, parts, &merged);
  ASSERT_EQ(merged.thresholds.size(), 3u);
  EXPECT_FALSE(merged.thresholds[0].passed);
  EXPECT_EQ(merged.thresholds[0].message, "p99 = 300ms, limit < 250ms (over by 50ms, 20%)");
  EXPECT_FALSE(merged.thresholds[1].passed);
  EXPECT_EQ(merged.thresholds[1].message, "errors = 12, limit <= 10 (over by 2, 20%)");
  EXPECT_TRUE(merged.thresholds[2].passed);
  EXPECT_EQ(merged.thresholds[2].message, "p50 = 1ms, limit <= 1ms");

  // The same verdict from the reducer's output of the same partials, and in every mode that
  // reads the merge.
  std::string reduced = Write("reduced", Run({}, parts));
  for (StatsMode mode : {StatsMode::kReducer, StatsMode::kCsv, StatsMode::kJson, StatsMode::kTable,
                         StatsMode::kNone}) {
    StatsJobSummary again;
    Run(Judging({"p99<250ms", "errors<=10", "p50<=1ms@/a"}, mode), {reduced}, &again);
    ASSERT_EQ(again.thresholds.size(), 3u);
    for (size_t i = 0; i < 3; ++i)
      EXPECT_EQ(again.thresholds[i].message, merged.thresholds[i].message)
          << static_cast<int>(mode);
    EXPECT_EQ(again.malformed, 0u);
  }
}

// The reverse: the fourth mapper alone fails p99 (1 slow request in 25), the merge of 100
// requests passes it.
TEST_F(StatsJobTest, OneMapperFailsAloneAndTheMergePasses) {
  std::vector<std::string> parts;
  for (int m = 0; m < 4; ++m)
    parts.push_back(
        Write("part-" + std::to_string(m), MapperPartials(m < 3 ? 25 : 24, m < 3 ? 0 : 1, 0)));
  StatsJobOptions options = Judging({"p99<250ms"}, StatsMode::kNone);
  StatsJobSummary alone;
  Run(options, {parts[3]}, &alone);
  ASSERT_EQ(alone.thresholds.size(), 1u);
  EXPECT_EQ(alone.thresholds[0].message, "p99 = 300ms, limit < 250ms (over by 50ms, 20%)");
  StatsJobSummary merged;
  Run(options, parts, &merged);
  ASSERT_EQ(merged.thresholds.size(), 1u);
  EXPECT_TRUE(merged.thresholds[0].passed);
  EXPECT_EQ(merged.thresholds[0].message, "p99 = 1ms, limit < 250ms");
}

// The results are in --json, --summary-json and the HTML report.
TEST_F(StatsJobTest, ThresholdResultsInEveryReport) {
  std::string part = Write("part", MapperPartials(70, 30, 3));
  StatsJobOptions options = Judging({"p99<250ms", "errors<=10@/nope"}, StatsMode::kJson);
  options.summary_json_path = dir_ + "/summary.json";
  options.html_path = dir_ + "/report.html";
  std::string out = Run(options, {part});
  const std::string expected =
      "\"thresholds\":[{\"rule\":\"p99<250ms\",\"passed\":false,\"message\":\"p99 = "
      "300ms, limit < 250ms (over by 50ms, 20%)\"},{\"rule\":\"errors<=10@/nope\",\"passed\":"
      "false,\"message\":\"no requests with key '/nope'\"}]";
  EXPECT_NE(out.find(expected), std::string::npos) << out;
  std::stringstream summary_json;
  summary_json << std::ifstream(dir_ + "/summary.json").rdbuf();
  EXPECT_EQ(summary_json.str(), out);
  std::stringstream html;
  html << std::ifstream(dir_ + "/report.html").rdbuf();
  EXPECT_NE(html.str().find("2 of 2 failed."), std::string::npos);
  EXPECT_NE(html.str().find("<td class=\"key\">p99&lt;250ms</td><td>300ms</td><td "
                            "class=\"err\">FAILED</td><td class=\"detail\">p99 = 300ms, limit "
                            "&lt; 250ms (over by 50ms, 20%)</td>"),
            std::string::npos)
      << html.str();
}

// A threshold's key folded past --max-keys has no row of its own: its message says why.
TEST_F(StatsJobTest, ThresholdOnAFoldedKeySaysSo) {
  std::string records;
  for (int i = 0; i < 5; ++i)
    records += "http://h/item/" + std::to_string(i) + "\t0.001\n";
  StatsJobOptions options = Judging({"p99<1s@http://h/item/3"}, StatsMode::kTable);
  options.max_keys = 2;
  StatsJobSummary summary;
  Run(options, {Write("r", records)}, &summary);
  ASSERT_EQ(summary.thresholds.size(), 1u);
  EXPECT_FALSE(summary.thresholds[0].passed);
  EXPECT_EQ(summary.thresholds[0].message.rfind("no requests with key 'http://h/item/3' (", 0), 0u)
      << summary.thresholds[0].message;
  EXPECT_NE(summary.thresholds[0].message.find("--max-keys 0 keeps them)"), std::string::npos);
}

}  // namespace
}  // namespace hammer::stats
