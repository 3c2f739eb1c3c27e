#include "hammer/load/request_feed.h"

#include <algorithm>
#include <bit>

#include "hammer/base/strings.h"
#include "hammer/http/message.h"
#include "hammer/load/load_worker.h"
#include "hammer/stats/key_hash.h"

namespace hammer::load {

namespace {

constexpr size_t kInvalidKeyBytes = 256;

// Whether `a` and `b` are the same line, their last eight bytes compared first: lines on one
// origin share their start and differ mostly at the end, so most other lines are told apart by
// one word.
bool SameLine(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  constexpr size_t kWord = sizeof(uint64_t);
  if (a.size() >= kWord &&
      !BytesEqual(a.data() + a.size() - kWord, b.data() + b.size() - kWord, kWord)) {
    return false;
  }
  return SameText(a, b);
}

}  // namespace

std::string PrintableKey(std::string_view text, bool oversized) {
  std::string key;
  static const char kHex[] = "0123456789abcdef";
  for (unsigned char c : text.substr(0, kInvalidKeyBytes)) {
    if (c >= 0x20 && c < 0x7f) {
      key.push_back(static_cast<char>(c));
    } else {
      key.append("\\x").push_back(kHex[c >> 4]);
      key.push_back(kHex[c & 15]);
    }
  }
  if (oversized || text.size() > kInvalidKeyBytes) key.append("...");
  return key;
}

RequestFeed::RequestFeed(const LoadOptions* options, TargetSource* lines, SpecSource* specs,
                         SharedRunState* shared, http::HttpClient* client, size_t slots)
    : batch_size_(std::clamp<size_t>(slots, 1, 256)),
      options_(options),
      lines_(lines),
      specs_(specs),
      shared_(shared),
      client_(client) {}

bool RequestFeed::TakeTicket() {
  if (shared_->requests_left.load(std::memory_order_relaxed) == INT64_MAX) return true;
  return shared_->requests_left.fetch_sub(1, std::memory_order_relaxed) > 0;
}

bool RequestFeed::RefillLines() {
  next_ = 0;
  const TargetSource::Batch batch = lines_->NextBatch(line_batch_, batch_size_);
  waiting_for_input_ = batch == TargetSource::Batch::kNotYet;
  if (batch == TargetSource::Batch::kEnd) exhausted_ = true;
  return batch == TargetSource::Batch::kLines;
}

bool RequestFeed::RefillSpecs() {
  next_ = 0;
  if (!specs_->NextBatch(spec_batch_, batch_size_)) exhausted_ = true;
  return !exhausted_;
}

std::optional<Nanos> RequestFeed::PeekOffset() {
  if (exhausted_ || specs_ == nullptr) return std::nullopt;
  if (next_ >= spec_batch_.size() && !RefillSpecs()) return std::nullopt;
  return spec_batch_[next_].offset;
}

const PreparedRequest* RequestFeed::Next(PreparedRequest* scratch) {
  while (!exhausted_) {
    if (specs_ != nullptr) {
      if (next_ >= spec_batch_.size() && !RefillSpecs()) return nullptr;
      if (!TakeTicket()) break;
      return FromSpec(spec_batch_[next_++], scratch);
    }
    if (next_ >= line_batch_.size() && !RefillLines()) return nullptr;
    const SourceLine& line = line_batch_[next_++];
    if (!line.request() && !line.oversized) continue;
    if (!TakeTicket()) break;
    const bool bypass = misses_since_hit_ > options_->max_prepared_targets;
    if (bypass && ++bypassed_ < kBypassProbe) return FromLine(line, scratch);
    bypassed_ = 0;
    // The line of the last hit again (one URL, or a run of one line): no hash and no lookup.
    if (last_hit_ != nullptr && SameLine(last_hit_->first.text, line.text)) {
      last_hit_->second.referenced = true;
      misses_since_hit_ = 0;
      return last_hit_->second.request.get();
    }
    const LineKey key{line.text, stats::HashKey(line.text)};
    auto it = cache_.find(key);
    if (it != cache_.end()) {
      it->second.referenced = true;
      misses_since_hit_ = 0;
      last_hit_ = &*it;
      return it->second.request.get();
    }
    ++misses_since_hit_;
    if (!SeenBefore(key.hash)) return FromLine(line, scratch);
    misses_since_hit_ = 0;  // a line seen twice: the input repeats
    if (cache_.size() < options_->max_prepared_targets) {
      auto entry = cache_.try_emplace(CacheKey{line.text, key.hash}).first;
      entry->second.request = std::make_unique<PreparedRequest>();
      clock_.push_back(&*entry);
      return FromLine(line, entry->second.request.get());
    }
    // Full: most misses leave the cache alone, so a cycle longer than it keeps most of its lines.
    if (misses_when_full_++ % kAdmitWhenFull != 0) return FromLine(line, scratch);
    Cache::value_type* victim = Victim();
    if (victim == nullptr) return FromLine(line, scratch);
    // The same node under the new line's text: no allocation, and clock_ still points at it.
    Cache::node_type node = cache_.extract(cache_.find(victim->first));
    node.key().text = line.text;
    node.key().hash = key.hash;
    node.mapped().referenced = false;
    PreparedRequest* target = node.mapped().request.get();
    cache_.insert(std::move(node));
    return FromLine(line, target);
  }
  exhausted_ = true;
  return nullptr;
}

bool RequestFeed::SeenBefore(uint64_t hash) {
  if (seen_.empty())
    seen_.resize(std::bit_ceil(std::max<size_t>(64, 2 * options_->max_prepared_targets)));
  uint32_t* pair = &seen_[hash & (seen_.size() - 2)];
  const uint32_t fingerprint = static_cast<uint32_t>(hash >> 32) | 1;
  if (pair[0] == fingerprint || pair[1] == fingerprint) return true;
  // An empty slot first; in a full pair, the slots take turns (whichever the last write
  // anywhere did not take), so no one line keeps its slot against every other.
  const size_t slot = pair[0] == 0 ? 0 : pair[1] == 0 ? 1 : (seen_turn_ ^= 1);
  pair[slot] = fingerprint;
  return false;
}

RequestFeed::Cache::value_type* RequestFeed::Victim() {
  // Two turns at most: the first clears every referenced bit it passes.
  for (size_t step = 0; step < 2 * clock_.size(); ++step) {
    Cache::value_type* entry = clock_[hand_];
    hand_ = hand_ + 1 == clock_.size() ? 0 : hand_ + 1;
    if (entry->second.request->in_flight > 0) continue;
    if (entry->second.referenced) {
      entry->second.referenced = false;
      continue;
    }
    return entry;
  }
  return nullptr;
}

const PreparedRequest* RequestFeed::FromLine(const SourceLine& line, PreparedRequest* target) {
  TargetLine parsed = line.target();  // parsed once, by the TargetSource
  target->invalid.reset();
  if (line.oversized) {
    target->key = PrintableKey(line.text, true);
    target->invalid =
        "line longer than " + std::to_string(options_->source.max_line_bytes) + " bytes";
  } else if (Status status = url_parser_.Parse(parsed.url, &target->url); !status.ok()) {
    target->key = PrintableKey(parsed.url, false);
    target->invalid = status.message();
  } else {
    std::string_view method = options_->method.empty() ? parsed.method : options_->method;
    if (line_template_.Fits(method, target->url)) {
      line_template_.Fill(target->url, target);
    } else {
      PrepareRequest(method, target->url, options_->headers, options_->body, client_, target);
      line_template_.Learn(*target);
    }
    options_->keys.KeyFor(method, target->url, parsed.url, &target->key);
  }
  target->stats_generation = PreparedRequest::kUnresolved;
  return target;
}

const PreparedRequest* RequestFeed::FromSpec(const RequestSpec& spec, PreparedRequest* target) {
  target->invalid.reset();
  Result<http::Url> url = http::ParseUrl(spec.url);
  if (!url.ok()) {
    target->key = PrintableKey(spec.url, false);
    target->invalid = spec.where + ": " + url.status().message();
    target->stats_generation = PreparedRequest::kUnresolved;
    return target;
  }
  // The entry's own headers win; global -H headers fill in what it does not set.
  merged_headers_ = spec.headers;
  for (const auto& [name, value] : options_->headers) {
    bool present = false;
    for (const auto& [have, unused] : spec.headers)
      present = present || http::EqualsIgnoreCase(have, name);
    if (!present) merged_headers_.emplace_back(name, value);
  }
  std::string_view method =
      options_->method.empty() ? std::string_view(spec.method) : std::string_view(options_->method);
  target->body_storage = spec.body.empty() ? options_->body : spec.body;
  PrepareRequest(method, *url, merged_headers_, target->body_storage, client_, target);
  options_->keys.KeyFor(method, *url, spec.url, &target->key);
  target->stats_generation = PreparedRequest::kUnresolved;
  return target;
}

}  // namespace hammer::load
