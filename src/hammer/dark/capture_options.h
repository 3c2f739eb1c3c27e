// What `hammer dark --capture` records and where (capture_writer.h writes it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "hammer/base/clock.h"

namespace hammer::dark {

struct CaptureOptions {
  std::string path;  // --capture: the JSON-lines file; empty: nothing is recorded
  // --capture-rate: the share of requests recorded, each drawn independently (1: all).
  double rate = 1.0;
  // --capture-max-rps: at most this many requests recorded per wall-clock second, all loops
  // together (0: no cap).
  uint64_t max_rps = 0;
  // --capture-filter: RE2 patterns matched against "METHOD /path" (the target without its
  // query); when any is given, a request is recorded only if one matches it whole.
  std::vector<std::string> filters;
  // --capture-body-limit: request bodies are recorded up to this many bytes; a longer one is
  // marked truncated.
  size_t body_limit = 64 * 1024;
  // --capture-redact / --capture-keep: header fields and query parameters whose values are
  // replaced, besides the defaults (capture_line.h), and defaults kept.
  std::vector<std::string> redact;
  std::vector<std::string> keep;
  // --capture-rotate: the file is completed and a new one begun when it holds this many bytes
  // or has been written to for this long (0: never, by that measure; capture_writer.h).
  uint64_t rotate_bytes = 0;
  Nanos rotate_interval = 0;
  // --capture-compress zstd (the default for a FILE ending in ".zst"): every write is one zstd
  // frame of whole lines (capture_writer.h), at this zstd level.
  bool zstd = false;
  int zstd_level = 1;
  // The writer's queue: exchanges beyond either bound are dropped (and counted) rather than
  // waited for.
  size_t queue_max_lines = 16384;
  size_t queue_max_bytes = 64u << 20;

  bool enabled() const { return !path.empty(); }
  bool rotates() const { return rotate_bytes > 0 || rotate_interval > 0; }
};

}  // namespace hammer::dark
