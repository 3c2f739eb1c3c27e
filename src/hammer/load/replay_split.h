// ReplaySplit: --split i/N and --split-by, which give each of N workers (machines, Hadoop
// mappers, Kubernetes pods) one part of a request file, so that the N parts replayed together
// (--replay, the same --start-at and --speed) are the whole recording with its timing.
//
// Every worker reads the whole file and keeps the entries of its part. An entry's part is a
// hash of a key, modulo N: by connection (the default), the key is the entry's client
// (RequestSpec::client: a capture's `conn`, an access log's client address), so the requests
// of one client connection stay together and in order on one worker; an entry without a client
// (a HAR, a capture written before captures carried `conn`) falls back to its URL. By url, the
// key is the URL as the file has it (before --base-url), so every request for one URL goes to
// one worker (a per-URL cache stays warm). The hash is 64-bit FNV-1a (Fowler, Noll, Vo;
// draft-eastlake-fnv) followed by SplitMix64's finalizer (Steele, Lea, Flood, OOPSLA 2014), so
// the parts are the same on every machine and in every version, and balanced for any N.
//
// The parts are disjoint and their union is the file: each entry belongs to exactly one.
// A plain value; thread-safe to read.
#pragma once

#include <cstdint>
#include <string_view>

#include "hammer/base/status.h"
#include "hammer/load/request_spec.h"

namespace hammer::load {

enum class SplitBy : uint8_t { kConnection, kUrl };

Result<SplitBy> ParseSplitBy(std::string_view text);

class ReplaySplit {
 public:
  // "i/N" with 0 <= i < N <= 1,000,000 (parts count from 0, as Hadoop's task partition and
  // Kubernetes' JOB_COMPLETION_INDEX do). Errors name the problem; they start with "--split".
  static Result<ReplaySplit> Parse(std::string_view text, SplitBy by);
  // Part `index` of `count` (0 <= index < count).
  ReplaySplit(int index, int count, SplitBy by) : index_(index), count_(count), by_(by) {}

  // True when `spec` belongs to this part.
  bool Keeps(const RequestSpec& spec) const { return PartOf(spec) == index_; }
  // The part `spec` belongs to, 0..count-1.
  int PartOf(const RequestSpec& spec) const;

  int index() const { return index_; }
  int count() const { return count_; }

  // The hash parts are chosen by.
  static uint64_t Hash(std::string_view key);

 private:
  int index_ = 0;
  int count_ = 1;
  SplitBy by_ = SplitBy::kConnection;
};

}  // namespace hammer::load
