#include "hammer/load/load_report.h"

#include <fmt/format.h>

#include <csignal>
#include <ctime>
#include <nlohmann/json.hpp>
#include <vector>

#include "hammer/stats/counter_exposition.h"
#include "hammer/stats/one_request_hint.h"
#include "hammer/stats/report/html.h"
#include "hammer/stats/report/json.h"
#include "hammer/stats/report/json_writer.h"
#include "hammer/stats/report/table.h"

namespace hammer::load {

namespace {

// Shorter waits for input are a pipe's ordinary pace, not worth a line of the summary.
constexpr double kShownInputWait = 0.001;
// --replay: the seconds of the schedule that fell behind are listed up to this many (every one
// is in --summary-json).
constexpr size_t kShownBehindSeconds = 10;

std::string Ms(int64_t micros) {
  return fmt::format("{:.2f}ms", micros / 1000.0);
}

// Unix microseconds as RFC 3339 UTC with six decimals: 2026-12-02T16:47:16.123456Z.
std::string Rfc3339Micros(int64_t unix_micros) {
  const int64_t micros = ((unix_micros % 1'000'000) + 1'000'000) % 1'000'000;
  const time_t seconds = static_cast<time_t>((unix_micros - micros) / 1'000'000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char date[32];
  const size_t n = std::strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:06}Z", std::string_view(date, n), micros);
}

// The run's latency line: percentiles held within the exact [min, max] (KeyStats::Percentile),
// as in the table below it.
std::string Percentiles(const stats::KeyStats& s) {
  return fmt::format("p50 {}  p90 {}  p99 {}  p99.9 {}  max {}", Ms(s.Percentile(50)),
                     Ms(s.Percentile(90)), Ms(s.Percentile(99)), Ms(s.Percentile(99.9)),
                     Ms(s.max_micros));
}

// The uncorrected latencies have no exact bounds: the histogram's own.
std::string Percentiles(const stats::Histogram& h) {
  return fmt::format("p50 {}  p90 {}  p99 {}  p99.9 {}  max {}", Ms(h.ValueAtPercentile(50)),
                     Ms(h.ValueAtPercentile(90)), Ms(h.ValueAtPercentile(99)),
                     Ms(h.ValueAtPercentile(99.9)), Ms(h.max()));
}

// --replay: how the schedule was kept, and each second that fell behind.
std::string ReplayLines(const LoadSummary& s) {
  const ReplayTiming& timing = s.replay;
  const uint64_t late = timing.late();
  std::string out = fmt::format(
      "  replay       at speed {:g}, {} s of schedule: {}; inter-arrival KS {:.3f} (scheduled "
      "vs achieved gaps)\n",
      s.speed, timing.seconds().size(),
      late == 0 ? std::string("every entry sent within 1 ms of its time")
                : fmt::format("{} entries sent more than 1 ms late, up to {} behind", late,
                              Ms(timing.max_behind() / kMicrosecond)),
      timing.InterArrivalKs());
  size_t shown = 0;
  size_t behind = 0;
  for (size_t k = 0; k < timing.seconds().size(); ++k) {
    const ReplayTiming::Second& row = timing.seconds()[k];
    if (row.late == 0) continue;
    ++behind;
    if (shown == kShownBehindSeconds) continue;
    ++shown;
    out += fmt::format(
        "  behind       second {}: {} of {} due sent late, up to {} behind; {} sent in it\n", k,
        row.late, row.due, Ms(row.max_behind / kMicrosecond), row.sent);
  }
  if (behind > shown) {
    out += fmt::format("  behind       {} more seconds fell behind (--summary-json lists each)\n",
                       behind - shown);
  }
  return out;
}

}  // namespace

std::string FormatLoadSummary(const LoadSummary& s, bool with_table, size_t max_rows) {
  std::string out;
  out += fmt::format(
      "hammer load: {} requests sent = {} succeeded + {} failed, in {:.2f} s: "
      "{:.1f} req/s{}\n",
      s.requests(), s.succeeded, s.failed, s.seconds, s.rps(),
      s.abort ? " (aborted: a threshold failed, --abort-on-fail)"
      : s.interrupted
          ? (s.signal == SIGTERM ? " (interrupted by SIGTERM)" : " (interrupted by SIGINT)")
          : "");
  if (s.counters.warmup > 0) {
    out += fmt::format("  warmup       {} requests sent during --warmup (not counted above)\n",
                       s.counters.warmup);
  }
  if (s.counters.aborted > 0) {
    out += fmt::format(
        "  aborted      {} requests in flight, abandoned at a second signal (not counted above)\n",
        s.counters.aborted);
  }
  for (size_t i = 0; i < kFailureCount; ++i) {
    uint64_t n = s.total.failures.counts().by_type[i];
    if (n == 0) continue;
    out += fmt::format("  failed {:<17} {:>10}", kFailureNames[i], n);
    if (!s.failure_examples[i].empty()) out += "   e.g. " + s.failure_examples[i].front();
    out += "\n";
  }
  if (s.succeeded > 0) {
    out += fmt::format("  latency      {}{}\n", Percentiles(s.total),
                       s.open_loop ? "  (from intended send time)" : "");
    if (s.open_loop || s.replayed) {
      out +=
          fmt::format("  uncorrected  {}  (from actual send time)\n", Percentiles(s.uncorrected));
    }
  }
  if (s.input_wait_seconds >= kShownInputWait) {
    out += fmt::format("  input wait   {:.2f} s with {} and no input line arrived yet{}\n",
                       s.input_wait_seconds, s.open_loop ? "requests due" : "free slots",
                       s.open_loop ? " (the schedule paused: not counted as latency)" : "");
  }
  if (s.replayed && !s.replay.empty()) out += ReplayLines(s);
  if (s.open_loop || s.replayed) {
    if (s.open_loop) {
      out += fmt::format("  target rate {:.1f} req/s, achieved {:.1f} req/s\n", s.target_rate,
                         s.rps());
    }
    if (s.counters.late_no_slot > 0) {
      out += fmt::format(
          "  {} requests started more than 1 ms late because all {} in-flight "
          "slots were busy (raise -c); their latency counts from the due time\n",
          s.counters.late_no_slot, s.concurrency);
    }
    if (s.counters.late_behind > 0) {
      out += fmt::format(
          "  {} requests started more than 1 ms late because the generator was "
          "busy (CPU): add threads or machines\n",
          s.counters.late_behind);
    }
    if (s.counters.dropped > 0) {
      out += fmt::format(
          "  {} requests were due before the end but never sent (the run was stopped first); "
          "they are not counted above\n",
          s.counters.dropped);
    }
  }
  out += fmt::format("  connections  {} opened, {} reuses, {} stale retries",
                     s.counters.connections_opened, s.counters.connections_reused,
                     s.counters.stale_retries);
  if (!s.connect_time.empty()) {
    out += fmt::format("; connect p50 {} p99 {}", Ms(s.connect_time.ValueAtPercentile(50)),
                       Ms(s.connect_time.ValueAtPercentile(99)));
  }
  out += "\n";
  if (s.counters.tls_handshakes > 0) {
    // Request latency includes connection set-up, as the seed's curl timing did; handshakes
    // are also measured on their own so their cost is visible apart.
    out += fmt::format("  tls          {} handshakes ({} resumed), handshake p50 {} p99 {}\n",
                       s.counters.tls_handshakes, s.counters.tls_resumed,
                       Ms(s.handshake_time.ValueAtPercentile(50)),
                       Ms(s.handshake_time.ValueAtPercentile(99)));
  }
  if (s.counters.redirects > 0)
    out += fmt::format("  redirects    {} followed\n", s.counters.redirects);
  if (s.grpc_statuses.total() > 0) {
    out += "  grpc-status ";
    const char* separator = " ";
    for (const auto& [name, n] : s.grpc_statuses.Counted()) {
      out += fmt::format("{}{} {}", separator, name, n);
      separator = ", ";
    }
    out += "\n";
  }
  for (const auto& [reason, n] : s.skipped) {
    out += fmt::format("  skipped      {} request-file entries: {}\n", n, reason);
  }
  if (!s.source_warning.empty()) out += "  warning: " + s.source_warning + "\n";
  if (s.key_folding.folded) {
    out += "  keys         " + s.key_folding.Describe() + "\n";
  } else if (std::string hint = stats::OneRequestRowsHint(s.keys); !hint.empty()) {
    out += "  keys         " + hint + "\n";
  }
  if (with_table && !s.keys.empty()) out += "\n" + stats::FormatKeyTable(s.keys, max_rows);
  // Last, under the table's TOTAL row when there is one: the statuses are the run's, not a key's.
  if (const auto codes = s.status_codes.Counted(); !codes.empty()) {
    out += "  status codes";
    const char* separator = " ";
    for (const auto& [code, n] : codes) {
      out += fmt::format("{}{}: {}", separator, code, n);
      separator = ", ";
    }
    out += "\n";
  }
  return out;
}

std::string LoadSummaryJson(const LoadSummary& s, std::string_view command,
                            const std::vector<stats::ThresholdResult>& thresholds) {
  nlohmann::ordered_json j = stats::SummaryHeader(command);
  j.update(stats::OutcomeJson(s.total));
  j["thresholds"] = stats::ThresholdsJson(thresholds);
  j["seconds"] = s.seconds;
  j["rps"] = s.rps();
  // When the measured part began and when the last response came, to line the run up with a
  // service's own graphs and logs (and to time what hammer does after its last response).
  if (s.wall_end_us > 0) {  // not for a run stopped before it began (--start-at)
    j["started_at"] = Rfc3339Micros(s.wall_start_us);
    j["ended_at"] = Rfc3339Micros(s.wall_end_us);
  }
  j["open_loop"] = s.open_loop;
  if (s.open_loop) j["target_rate"] = s.target_rate;
  if (s.open_loop || s.replayed) {
    j["uncorrected_latency"] = stats::LatencyJson(s.uncorrected);  // from the actual send time
  }
  if (s.replayed) {
    // Per second of the schedule: what was due, what went out, how late (replay_timing.h).
    nlohmann::ordered_json replay;
    replay["speed"] = s.speed;
    replay["late"] = s.replay.late();
    replay["max_behind_ms"] = static_cast<double>(s.replay.max_behind()) / kMillisecond;
    replay["inter_arrival_ks"] = s.replay.InterArrivalKs();
    nlohmann::ordered_json seconds = nlohmann::ordered_json::array();
    for (size_t k = 0; k < s.replay.seconds().size(); ++k) {
      const ReplayTiming::Second& row = s.replay.seconds()[k];
      seconds.push_back({{"second", k},
                         {"due", row.due},
                         {"sent", row.sent},
                         {"late", row.late},
                         {"max_behind_ms", static_cast<double>(row.max_behind) / kMillisecond}});
    }
    replay["seconds"] = std::move(seconds);
    j["replay"] = std::move(replay);
  }
  j["input_wait_seconds"] = s.input_wait_seconds;
  j["late"] = s.counters.late();
  stats::AddCounterJson(j, LoadCounters::kCounterSpecs, s.counters.CounterValues());
  j["interrupted"] = s.interrupted;
  j["signal"] = s.signal == SIGTERM ? "SIGTERM" : s.signal == SIGINT ? "SIGINT" : "";
  j["aborted"] = s.abort.has_value();
  if (s.abort) {
    j["abort"] = {{"threshold", s.abort->threshold},
                  {"actual", s.abort->actual},
                  {"message", s.abort->message},
                  {"worker", s.abort->worker},
                  {"fleet", s.abort->fleet}};
  }
  nlohmann::ordered_json codes = nlohmann::ordered_json::object();
  for (const auto& [code, n] : s.status_codes.Counted())
    codes[std::to_string(code)] = n;
  j["status_codes"] = std::move(codes);
  if (s.grpc_statuses.total() > 0) {
    nlohmann::ordered_json statuses = nlohmann::ordered_json::object();
    for (const auto& [name, n] : s.grpc_statuses.Counted())
      statuses[std::string(name)] = n;
    j["grpc_statuses"] = std::move(statuses);
  }
  // The key rows (up to --max-keys of them) are written as text, not built as a tree: the
  // header as nlohmann prints it, without its closing "\n}", then the rows in the same layout
  // but one row to a line (grep finds a URL's row whole; 10,000 rows take 2.4 MB instead of
  // 3.5 MB).
  std::string out = stats::DumpJson(j, /*pretty=*/true);
  out.resize(out.size() - 2);
  stats::JsonWriter writer(&out, /*pretty=*/true, /*depth=*/1, /*continuing=*/true);
  writer.OneLineFrom(2);
  writer.Key("keys");
  writer.BeginArray();
  for (const auto& [key, stats] : s.keys) {
    writer.BeginObject();
    writer.Key("key");
    writer.String(key);
    stats::WriteOutcome(writer, stats);
    writer.EndObject();
  }
  writer.EndArray();
  if (s.key_folding.folded) {
    writer.Key("key_folding");
    writer.BeginObject();
    writer.Key("max_keys");
    writer.Uint(s.key_folding.max_keys);
    writer.Key("max_key_memory_bytes");
    writer.Uint(s.key_folding.max_bytes);
    // What folded the rows: too many keys, or their statistics' bytes.
    writer.Key("reason");
    writer.String(s.key_folding.for_memory ? "max_key_memory" : "max_keys");
    writer.Key("distinct_keys_estimate");
    writer.Uint(s.key_folding.distinct_keys);
    writer.Key("rows");
    writer.Uint(s.key_folding.rows);
    writer.Key("other_requests");
    writer.Uint(s.key_folding.other_requests);
    // The quietest rows went to (other) to stay within --max-key-memory.
    writer.Key("quiet_rows_in_other");
    writer.Bool(s.key_folding.shed);
    writer.Key("text");
    writer.String(s.key_folding.Describe());
    writer.EndObject();
  }
  writer.Finish();
  out += "\n}\n";
  return out;
}

std::string LoadSummaryHtml(const LoadSummary& s, std::string title,
                            std::vector<std::pair<std::string, std::string>> metadata,
                            std::vector<stats::ThresholdResult> thresholds) {
  stats::HtmlReportInput input;
  input.title = std::move(title);
  input.metadata = std::move(metadata);
  input.thresholds = std::move(thresholds);
  input.metadata.emplace_back("requests", fmt::format("{} sent = {} succeeded + {} failed",
                                                      s.requests(), s.succeeded, s.failed));
  input.metadata.emplace_back("duration",
                              fmt::format("{:.2f} s, {:.1f} req/s", s.seconds, s.rps()));
  if (s.open_loop) {
    input.metadata.emplace_back(
        "schedule", fmt::format("open loop at {:.1f} req/s: latency counts from each request's "
                                "due time",
                                s.target_rate));
  }
  if (s.input_wait_seconds >= kShownInputWait) {
    input.metadata.emplace_back(
        "input wait", fmt::format("{:.2f} s with {} and no input line arrived yet{}",
                                  s.input_wait_seconds, s.open_loop ? "requests due" : "free slots",
                                  s.open_loop ? " (not counted as latency)" : ""));
  }
  if (!s.source_warning.empty()) input.notes.push_back(s.source_warning);
  if (std::string note = stats::KeyRowsNote(
          s.key_folding, s.key_folding.folded ? "" : stats::OneRequestRowsHint(s.keys));
      !note.empty()) {
    input.notes.push_back(std::move(note));
  }
  input.keys = s.keys;
  input.total = s.total;
  input.status_codes = s.status_codes.Counted();
  for (size_t i = 0; i < kFailureCount; ++i) {
    for (const std::string& example : s.failure_examples[i]) {
      input.failure_examples.emplace_back(static_cast<Failure>(i), example);
    }
  }
  input.timeline = s.timeline.empty() ? nullptr : &s.timeline;
  input.covered_from_ms = s.wall_start_us / 1000;
  input.covered_to_ms = s.wall_end_us / 1000;
  input.duration_seconds = s.seconds;
  return stats::RenderHtmlReport(input);
}

}  // namespace hammer::load
