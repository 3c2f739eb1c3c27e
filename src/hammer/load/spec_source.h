// SpecSource: the stream of requests read from a request file (vegeta http targets, JSON
// lines, or a browser HAR), shared by every load worker, like TargetSource is for URL lists.
//
// vegeta and JSON-lines files are streamed (bounded memory) and re-read from the start for
// --loop; a HAR is read whole and cycled. A malformed entry stops the stream: error() then
// names the file and line, and the run ends with it. HAR entries that cannot be replayed are
// skipped and counted by reason (skipped()). With --loop, HAR offsets keep growing from one
// pass to the next so --har-timing replays the recording again and again. Thread-safe.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "hammer/base/status.h"
#include "hammer/load/har.h"
#include "hammer/load/jsonl_targets.h"
#include "hammer/load/request_spec.h"
#include "hammer/load/vegeta_targets.h"

namespace hammer::load {

enum class TargetsFormat : uint8_t { kLines, kVegeta, kJsonl, kHar };

Result<TargetsFormat> ParseTargetsFormat(std::string_view text);

class SpecSource {
 public:
  // Opens `path` ("-" = stdin; not with --loop for vegeta/jsonl) in `format` (not kLines).
  static Result<std::unique_ptr<SpecSource>> Open(const std::string& path, TargetsFormat format,
                                                  bool loop);

  // Fills `out` (storage reused) with up to `max` requests; false at the end (or on error).
  bool NextBatch(std::vector<RequestSpec>& out, size_t max);

  // Ends the input as soon as possible, from any thread: a worker blocked reading an idle pipe
  // or terminal returns within ~50 ms, and the stream ends there (not an error).
  void Interrupt() { interrupted_.store(true); }

  // The first malformed entry, if any ("targets.txt:12: expected 'METHOD URL'").
  std::optional<Status> error() const;
  std::map<std::string, uint64_t> skipped() const;
  uint64_t read() const;

 private:
  SpecSource(std::string path, TargetsFormat format, bool loop)
      : path_(std::move(path)), format_(format), loop_(loop) {}
  Status Reopen();
  Result<bool> NextOne(RequestSpec* out);

  std::atomic<bool> interrupted_{false};
  mutable std::mutex mutex_;
  std::string path_;
  TargetsFormat format_;
  bool loop_;
  std::optional<VegetaTargetReader> vegeta_;
  std::optional<JsonTargetReader> jsonl_;
  HarReadResult har_;
  size_t har_next_ = 0;
  Nanos har_pass_offset_ = 0;
  Nanos har_span_ = 0;
  uint64_t read_ = 0;
  uint64_t read_this_pass_ = 0;
  bool done_ = false;
  std::optional<Status> error_;
};

}  // namespace hammer::load
