// libFuzzer target for the Reducer (stats/reducer.h) over the LineReader (base/line_reader.h):
// arbitrary bytes as a record stream of raw records and partials, mixed, sorted or not.
// Seeds: tests/fuzz/corpus/reducer/ (sorted and unsorted record streams, timestamped records,
// partials from `hammer stats --combine`, malformed lines).
//
// The same bytes are reduced four ways:
//   A  line by line through OnLine, order detected, default window;
//   B  through LineReader::ReadAll over the bytes in memory, which takes the OnLines fast path
//      wherever it applies;
//   C  as A with Order::kUnsorted (every key in the map from the start);
//   D  as A with a window of 1 to 4 keys, so unsorted input can be found after the window.
// Besides crashes and sanitizer reports, __builtin_trap() fires when:
//   - A and B differ in anything (keys, order, figures, line and malformed counts, the first
//     malformed line and reason, sortedness, the timeline);
//   - a run's keys are not strictly increasing bytewise, or are emitted twice, while it did
//     not report unsorted input after its window (late_unsorted_line() == 0);
//   - A and C, or A and D when D saw no late unsorted line, give different keys or figures;
//   - malformed() exceeds lines(), or lines() differs from the number of lines in the input;
//   - an emitted key's typed failures exceed its errors, or its histogram total differs from
//     its count.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hammer/base/line_reader.h"
#include "hammer/stats/reducer.h"
#include "hammer/stats/timeline.h"

namespace stats = hammer::stats;

namespace {

void Require(bool ok) {
  if (!ok) __builtin_trap();
}

uint64_t Fnv1a(std::string_view bytes) {
  uint64_t hash = 14695981039346656037ull;
  for (char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  return hash;
}

using Keys = std::vector<std::pair<std::string, stats::KeyStats>>;

struct Collect : stats::KeySink {
  Keys keys;
  void OnKey(std::string_view key, const stats::KeyStats& figures) override {
    keys.emplace_back(std::string(key), figures);
  }
};

struct Outcome {
  Keys keys;
  uint64_t lines = 0;
  uint64_t malformed = 0;
  uint64_t first_malformed_line = 0;
  std::string first_malformed_reason;
  bool sorted = true;
  uint64_t late_unsorted_line = 0;
  std::vector<stats::Timeline::Bucket> timeline;
  int64_t timeline_start_ms = 0;

  bool operator==(const Outcome&) const = default;
};

template <typename Feed>
Outcome Reduce(stats::Reducer::Options options, Feed feed) {
  Collect collect;
  stats::Timeline timeline;
  stats::Reducer reducer(options, &collect, &timeline);
  feed(reducer);
  reducer.Finish();
  Outcome out;
  out.keys = std::move(collect.keys);
  out.lines = reducer.lines();
  out.malformed = reducer.malformed();
  out.first_malformed_line = reducer.first_malformed_line();
  out.first_malformed_reason = reducer.first_malformed_reason();
  out.sorted = reducer.sorted();
  out.late_unsorted_line = reducer.late_unsorted_line();
  for (size_t i = 0; i < timeline.size(); ++i)
    out.timeline.push_back(timeline.bucket(i));
  out.timeline_start_ms = timeline.empty() ? 0 : timeline.bucket_start_ms(0);
  return out;
}

std::vector<std::string_view> SplitLines(std::string_view input) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < input.size()) {
    size_t end = input.find('\n', start);
    if (end == std::string_view::npos) end = input.size();
    lines.push_back(input.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

void CheckKeys(const Outcome& outcome) {
  Require(outcome.malformed <= outcome.lines);
  for (size_t i = 0; i < outcome.keys.size(); ++i) {
    const stats::KeyStats& figures = outcome.keys[i].second;
    Require(figures.failures.Total() <= figures.errors);
    Require(figures.histogram.total_count() == figures.count);
    if (outcome.late_unsorted_line == 0 && i > 0) {
      Require(outcome.keys[i - 1].first < outcome.keys[i].first);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  const uint64_t hash = Fnv1a(input);
  const std::vector<std::string_view> lines = SplitLines(input);
  auto line_by_line = [&](stats::Reducer& reducer) {
    for (std::string_view line : lines)
      reducer.OnLine(line);
  };

  const Outcome a = Reduce({}, line_by_line);
  Require(a.lines == lines.size());
  CheckKeys(a);

  const Outcome b = Reduce({}, [&](stats::Reducer& reducer) {
    hammer::LineReader::Options options;
    options.max_line_bytes = stats::kMaxLineBytes;
    hammer::LineReader reader =
        hammer::LineReader::FromString(std::string(input), "fuzz input", options);
    Require(reader.ReadAll(reducer).ok());
  });
  Require(a == b);

  stats::Reducer::Options unsorted;
  unsorted.order = stats::Reducer::Order::kUnsorted;
  const Outcome c = Reduce(unsorted, line_by_line);
  CheckKeys(c);
  if (a.late_unsorted_line == 0) Require(a.keys == c.keys);

  stats::Reducer::Options small_window;
  small_window.window_keys = 1 + (hash >> 32) % 4;
  const Outcome d = Reduce(small_window, line_by_line);
  CheckKeys(d);
  Require(d.lines == a.lines && d.malformed == a.malformed);
  if (a.late_unsorted_line == 0 && d.late_unsorted_line == 0) Require(d.keys == a.keys);
  return 0;
}
