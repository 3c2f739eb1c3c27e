// Reducer: aggregates record lines (record.h: raw records and partials, mixed, in any order)
// into one KeyStats per key, and hands each finished key to a KeySink.
//
// Hadoop delivers a reducer's input sorted by key (bytewise), so by default the reducer streams:
// it keeps only the current key and emits it when the key changes, in input (= key) order.
// Unsorted input is detected: a key that sorts before the previous one switches the reducer to
// aggregating every key in a hash map and emitting them all, sorted by key, at Finish(). To make
// that switch lossless, the keys completed during a detection window (the first 4096 keys or
// 4 MiB of their statistics, whichever comes first) are held back and joined into the map; once
// the window has passed they are emitted and memory is bounded by the current key alone. (Input
// out of order is nearly always so from its first keys; a larger window costs fresh memory for
// every held key: 16 MiB made a 200-key, 2-million-line reduction 10% slower.) Input
// that turns unsorted after the window (two sorted files concatenated) cannot be repaired: the
// keys emitted before may be emitted again, and late_unsorted_line() says so. Order::kUnsorted
// skips the streaming attempt.
//
// Options::max_keys > 0 (reports; never the Hadoop reducer, whose output must stay exact)
// aggregates every key in a KeyTable of that many rows (key_table.h): keys beyond it are
// grouped by path template, then into "(other)". It implies Order::kUnsorted: memory is
// bounded by the table, sorted or not.
//
// Timestamped records (record.h) also go to a Timeline when one is given: every valid success
// and failure record carrying EPOCH_MS, of every key or only of Options::timeline_key. Partials
// carry no time and only reach the keys' figures.
//
// Malformed lines (record.h), partials whose figures disagree, and lines whose figures would
// overflow a key's counters are counted and otherwise ignored: they never create a key or change
// one. Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hammer/base/line_reader.h"
#include "hammer/stats/key_patterns.h"
#include "hammer/stats/key_stats.h"
#include "hammer/stats/key_table.h"
#include "hammer/stats/record.h"
#include "hammer/stats/timeline.h"

namespace hammer::stats {

class KeySink {
 public:
  virtual ~KeySink() = default;
  // Called once per key. `stats` is valid only during the call.
  virtual void OnKey(std::string_view key, const KeyStats& stats) = 0;
};

class Reducer : public LineHandler {
 public:
  enum class Order : uint8_t { kDetect, kUnsorted };
  struct Options {
    Order order = Order::kDetect;
    size_t window_keys = 4096;
    size_t window_bytes = 4 << 20;
    std::optional<std::string> timeline_key;  // only this key's records go to the timeline
    size_t max_keys = 0;                      // 0: every key exact
    uint64_t max_key_bytes = 0;               // KeyTable's max_bytes with max_keys; 0: none
    // --key-pattern: each record's key is renamed before it is aggregated (and before
    // timeline_key is compared). Non-empty implies Order::kUnsorted: renamed keys are not
    // sorted.
    KeyPatterns key_patterns;
  };

  // `sink` and `timeline` (optional) must outlive the reducer.
  Reducer(Options options, KeySink* sink, Timeline* timeline = nullptr);
  ~Reducer() override;

  // One line without its '\n'.
  void OnLine(std::string_view line) override;
  // The fast path (base/line_reader.h) of sorted input: takes the leading lines that belong to the
  // current key and are in hammer's own two-field format ("KEY<TAB>S.UUUUUU" or "KEY<TAB>"),
  // with exactly the result OnLine would have; stops at any other line.
  size_t OnLines(std::string_view lines) override;
  // A line longer than kMaxLineBytes (LineReader skipped it): malformed.
  void OnOverlongLine() override;
  // Emits every key not emitted yet. Call once, after the last line.
  void Finish();
  // From now on aggregates every key until Finish, as for unsorted input, so that lines given
  // after the input's own (the kept attempts of an AttemptSelector) still join their keys.
  // Lossless while the detection window is open; after it, keys already emitted may be emitted
  // again, and late_unsorted_line() says so.
  void HoldEveryKey();

  uint64_t lines() const { return lines_; }
  uint64_t malformed() const { return malformed_; }
  // 1-based line number and reason of the first malformed line (0 and "" when none).
  uint64_t first_malformed_line() const { return first_malformed_line_; }
  const std::string& first_malformed_reason() const { return first_malformed_reason_; }
  // False once the input was found unsorted (or Order::kUnsorted was asked for).
  bool sorted() const { return !unsorted_; }
  // Line number where unsorted input was found after the detection window; 0 otherwise.
  uint64_t late_unsorted_line() const { return late_unsorted_line_; }
  // What the key table folded (Options::max_keys); valid after Finish().
  const KeyFolding& key_folding() const { return key_folding_; }

 private:
  void Malformed(std::string_view reason);
  // The stats `key` accumulates into, switching keys (and detecting order) as needed; nullptr
  // when the line must be rejected because `fits` says its figures would overflow.
  template <typename Fits>
  KeyStats* StatsFor(std::string_view key, Fits fits);
  void CompleteCurrent();
  void CloseWindow();
  void SwitchToMap();

  void AddToTimeline(const ParsedRecord& record, std::string_view key);

  Options options_;
  KeySink* sink_;
  Timeline* timeline_;
  uint64_t lines_ = 0;
  uint64_t malformed_ = 0;
  uint64_t first_malformed_line_ = 0;
  std::string first_malformed_reason_;
  uint64_t late_unsorted_line_ = 0;
  bool unsorted_ = false;

  // Streaming state.
  bool has_current_ = false;
  std::string current_key_;
  KeyStats current_;
  bool window_open_ = true;
  std::vector<std::pair<std::string, KeyStats>> held_;
  size_t held_bytes_ = 0;

  // Map state, once unsorted.
  std::unique_ptr<KeyTable> map_;
  KeyFolding key_folding_;
};

}  // namespace hammer::stats
