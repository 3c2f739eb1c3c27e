// RequestFeed: one worker's view of the run's input, turned into PreparedRequests.
//
// It pulls batches from the shared TargetSource (URL lines) or SpecSource (request files),
// skips comments, takes one ticket of the --requests budget per request, applies --method,
// global headers and body, and the key mapping, and keeps prepared requests for repeated lines
// in a bounded cache (a line cycled millions of times is parsed once). A line is admitted on
// its second sighting, not its first: a small table of line fingerprints (SeenBefore) remembers
// the lines prepared once, so a line that never repeats (most of a real URL log) is prepared
// into the caller's scratch request and costs no cache entry, allocation or eviction. The cache
// holds LoadOptions::max_prepared_targets requests; when it is full, a new line takes the place
// of one not used since the clock hand last passed it (CLOCK, second chance) and not in flight,
// so repeated lines stay free however many distinct lines stream by. Only one miss in
// kAdmitWhenFull (of lines seen before) does so; the others are prepared into scratch: on an
// input cycling through more distinct lines than the cache holds, admitting every one would evict
// each line just before its next use (CLOCK, like LRU, keeps none of such a cycle), while
// throttled, about capacity / cycle of the lines stay cached and hit. The price: a new working set
// takes about kAdmitWhenFull times as many misses to move in. A line is hashed once (HashKey), for
// the cache and SeenBefore, and not at all when it is the line of the last hit. When
// max_prepared_targets lines in a row were new (neither cached nor seen before: every line
// distinct), only one line in kBypassProbe is looked up, until one of those was seen before: a
// stream of distinct lines then costs no lookup per line. A line on the origin of the line
// prepared before it, with the same method, is prepared from that line's head
// (RequestTemplate): only its target is parsed and written. Lines that are not
// valid URLs come back prepared as invalid (an invalid_url failure), never dropped. Owned by
// one LoadWorker; loop thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "hammer/http/client.h"
#include "hammer/http/url.h"
#include "hammer/load/load_options.h"
#include "hammer/load/prepared_request.h"
#include "hammer/load/spec_source.h"
#include "hammer/load/target_source.h"

namespace hammer::load {

struct SharedRunState;

class RequestFeed {
 public:
  // `slots`: this worker's in-flight slots. Batches are no larger, so a short input is shared
  // among the workers instead of going whole to the first one.
  RequestFeed(const LoadOptions* options, TargetSource* lines, SpecSource* specs,
              SharedRunState* shared, http::HttpClient* client, size_t slots);

  // The next request, prepared (cached, or into `scratch`); nullptr at the end of the input or
  // of the --requests budget (exhausted()), or when the next line has not arrived yet
  // (waiting_for_input(): ask again later).
  const PreparedRequest* Next(PreparedRequest* scratch);
  // Request files with timing (HAR): the offset of the next request, without taking it.
  std::optional<Nanos> PeekOffset();
  bool exhausted() const { return exhausted_; }
  // The last Next found no line arrived yet on an input that is still open (a pipe, a terminal).
  bool waiting_for_input() const { return waiting_for_input_; }

 private:
  bool TakeTicket();
  bool RefillLines();
  bool RefillSpecs();
  const PreparedRequest* FromLine(const SourceLine& line, PreparedRequest* target);
  const PreparedRequest* FromSpec(const RequestSpec& spec, PreparedRequest* target);

  size_t batch_size_;
  const LoadOptions* options_;
  TargetSource* lines_;
  SpecSource* specs_;
  SharedRunState* shared_;
  http::HttpClient* client_;
  std::vector<SourceLine> line_batch_;
  std::vector<RequestSpec> spec_batch_;
  size_t next_ = 0;
  bool exhausted_ = false;
  bool waiting_for_input_ = false;
  struct CachedRequest {
    std::unique_ptr<PreparedRequest> request;
    bool referenced = false;  // used since the clock hand passed
  };
  // A line's text and its HashKey, computed once per line: the cache is looked up with it (no
  // std::string built) and SeenBefore takes its hash. Cached keys keep the hash, so the map never
  // hashes text again (rehashing, extracting a victim).
  struct LineKey {
    std::string_view text;
    uint64_t hash;
  };
  struct CacheKey {
    std::string text;
    uint64_t hash;
  };
  struct KeyHash {
    using is_transparent = void;
    size_t operator()(const LineKey& key) const noexcept { return key.hash; }
    size_t operator()(const CacheKey& key) const noexcept { return key.hash; }
  };
  struct KeyEqual {
    using is_transparent = void;
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const noexcept {
      return a.hash == b.hash && a.text == b.text;
    }
  };
  using Cache = std::unordered_map<CacheKey, CachedRequest, KeyHash, KeyEqual>;
  // A cached request to reuse for another line (none when every one is in flight).
  Cache::value_type* Victim();

  // Whether the line hashed to `hash` was prepared before (its fingerprint is in seen_),
  // remembering it if not. Each hash picks a pair of slots: a line is forgotten only when two
  // others since took both, so lines sharing a slot do not keep erasing each other for good. A
  // fingerprint collision only admits a line on its first sighting.
  bool SeenBefore(uint64_t hash);

  static constexpr uint64_t kBypassProbe = 64;
  // When the cache is full, one eligible miss in kAdmitWhenFull replaces a victim.
  static constexpr uint64_t kAdmitWhenFull = 8;

  Cache cache_;
  uint64_t misses_since_hit_ = 0;
  uint64_t bypassed_ = 0;                  // lines not looked up since the last probe
  std::vector<Cache::value_type*> clock_;  // every entry, in insertion order (nodes never move)
  size_t hand_ = 0;
  Cache::value_type* last_hit_ = nullptr;  // its key may have changed since (a victim's did)
  uint64_t misses_when_full_ = 0;          // misses of lines seen before, with the cache full
  std::vector<uint32_t> seen_;       // fingerprints in pairs by hash, 2+ slots per entry (0: empty)
  uint32_t seen_turn_ = 0;           // which slot of a full pair the next fingerprint takes
  http::HeaderList merged_headers_;  // scratch for spec headers + global headers
  http::UrlParser url_parser_;       // lines on one host: only their targets are parsed
  RequestTemplate line_template_;    // lines on one host: only their targets are written
};

// A printable, bounded record key for input that is not a URL (it may be binary or huge).
std::string PrintableKey(std::string_view text, bool oversized);

}  // namespace hammer::load
