// SpecSource: the stream of requests read from a request file (vegeta http targets, JSON
// lines, an access log, or a browser HAR), shared by every load worker, like TargetSource is
// for URL lists.
//
// vegeta, JSON-lines and access-log files are streamed (bounded memory) and re-read from the
// start for --loop; a HAR is read whole and cycled. A malformed entry stops the stream: error()
// then names the file and line, and the run ends with it. HAR entries and access-log lines that
// cannot be replayed are skipped and counted by reason (skipped()), as are captured entries
// whose body was cut (body_truncated) unless they are to be sent anyway.
//
// Timing (--replay): every entry gets its recorded offset (RequestSpec::offset) divided by the
// speed: a HAR's own, or a JSON line's `ts` (an access log's time) less the earliest (every
// entry must have one). A capture is written as exchanges end, not as they begin, so JSON lines
// and log lines are read through a window of kReorderWindow entries and handed out earliest
// first: entries that arrived less than that many entries apart come out in arrival order. An
// access log's time has one-second resolution: the entries of one second are read together and
// spread evenly over it (entry k of n at k/n s), in file order. With --loop, offsets keep
// growing from one pass to the next (a pass lasts its last offset plus 1 ms), so the schedule
// repeats.
//
// --split keeps this worker's part of the entries (replay_split.h) and counts the others as
// skipped; offsets and passes are those of the whole file, so that the parts replayed together
// are the whole schedule. --base-url rewrites each entry's URL (base_url.h). Thread-safe.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <string>
#include <vector>

#include "hammer/base/status.h"
#include "hammer/load/access_log.h"
#include "hammer/load/base_url.h"
#include "hammer/load/har.h"
#include "hammer/load/jsonl_targets.h"
#include "hammer/load/replay_split.h"
#include "hammer/load/request_spec.h"
#include "hammer/load/vegeta_targets.h"

namespace hammer::load {

enum class TargetsFormat : uint8_t { kLines, kVegeta, kJsonl, kHar, kAccessLog };

Result<TargetsFormat> ParseTargetsFormat(std::string_view text);

struct SpecOptions {
  bool loop = false;
  bool timed = false;                // --replay: offsets from the recording (JSON lines need `ts`)
  double speed = 1.0;                // --speed: offsets are divided by it
  std::optional<BaseUrl> base_url;   // required for kAccessLog (the log has no scheme or host)
  std::optional<ReplaySplit> split;  // --split: this worker's part only
  bool preserve_host = false;        // with base_url
  bool send_truncated = false;       // --replay-truncated: send entries whose body was cut
};

class SpecSource {
 public:
  static constexpr size_t kReorderWindow = 4096;

  // Opens `path` ("-" = stdin; not with --loop for vegeta/jsonl) in `format` (not kLines).
  static Result<std::unique_ptr<SpecSource>> Open(const std::string& path, TargetsFormat format,
                                                  const SpecOptions& options);

  // Fills `out` (storage reused) with up to `max` requests; false at the end (or on error).
  bool NextBatch(std::vector<RequestSpec>& out, size_t max);

  // Ends the input as soon as possible, from any thread: a worker blocked reading an idle pipe
  // or terminal returns within ~50 ms, and the stream ends there (not an error).
  void Interrupt() { interrupted_.store(true); }

  // The first malformed entry, if any ("targets.txt:12: expected 'METHOD URL'").
  std::optional<Status> error() const;
  std::map<std::string, uint64_t> skipped() const;
  uint64_t read() const;
  // Empty, or a note for the operator: the file ended early (a zstd capture cut short; its
  // lines were read up to the last complete one).
  std::string warning() const;

 private:
  SpecSource(std::string path, TargetsFormat format, const SpecOptions& options)
      : path_(std::move(path)), format_(format), options_(options) {}
  Status Reopen();
  Result<bool> NextOne(RequestSpec* out);
  Result<bool> NextRead(RequestSpec* out);       // in file order (HAR: in its order)
  Result<bool> NextInArrival(RequestSpec* out);  // by `ts`, through the window
  Status FillWindow();
  Result<bool> NextInSecond(RequestSpec* out);  // access logs: a second's entries spread over it
  bool TimedByStamp() const {  // entries carry `ts`, read through the window with --replay
    return format_ == TargetsFormat::kJsonl || format_ == TargetsFormat::kAccessLog;
  }
  void Schedule(RequestSpec* out);  // offset, speed, pass

  // The window of JSON lines read ahead, earliest `ts` (then file order) on top.
  struct Pending {
    RequestSpec spec;
    uint64_t order = 0;
  };
  struct LaterFirst {
    bool operator()(const Pending& a, const Pending& b) const {
      return a.spec.timestamp_us != b.spec.timestamp_us ? a.spec.timestamp_us > b.spec.timestamp_us
                                                        : a.order > b.order;
    }
  };

  std::atomic<bool> interrupted_{false};
  mutable std::mutex mutex_;
  std::string path_;
  TargetsFormat format_;
  SpecOptions options_;
  std::optional<VegetaTargetReader> vegeta_;
  std::optional<JsonTargetReader> jsonl_;
  std::optional<AccessLogReader> access_log_;
  std::vector<RequestSpec> second_;  // access logs with --replay: the entries of one second
  size_t second_next_ = 0;
  std::priority_queue<Pending, std::vector<Pending>, LaterFirst> window_;
  uint64_t read_order_ = 0;
  bool file_ended_ = false;  // the window holds what is left of this pass
  HarReadResult har_;
  size_t har_next_ = 0;
  int64_t pass_first_us_ = -1;  // the earliest `ts` of this pass
  Nanos pass_offset_ = 0;       // where this pass starts in the schedule
  Nanos pass_span_ = 0;         // the latest offset of this pass, from its start
  std::map<std::string, uint64_t> skipped_;
  uint64_t read_ = 0;
  uint64_t read_this_pass_ = 0;
  bool done_ = false;
  std::optional<Status> error_;
  std::string warning_;
};

}  // namespace hammer::load
