// The Prometheus remote-write 1.0 request body: a WriteRequest protobuf message, compressed
// with Snappy's block format (https://prometheus.io/docs/specs/remote_write_spec/).
//
// The messages, from prometheus/prompb/remote.proto and types.proto (field numbers are the
// wire contract):
//   message WriteRequest { repeated TimeSeries timeseries = 1; }   // field 2 and 3 unused here
//   message TimeSeries   { repeated Label labels = 1; repeated Sample samples = 2; }
//   message Label        { string name = 1; string value = 2; }
//   message Sample       { double value = 1; int64 timestamp = 2; }  // ms since the epoch
// Written by hand rather than with libprotobuf: four messages of two fields each, written once
// every few seconds, do not justify a code generator and its runtime. Every field is written,
// zeros included (a proto3 parser accepts explicit defaults).
//
// Labels of a series are written sorted by name (the spec requires it; `__name__` is one of
// them); a series's labels must have distinct names. Pure functions, any thread.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hammer/base/status.h"

namespace hammer::stats {

struct RemoteWriteSample {
  std::vector<std::pair<std::string, std::string>> labels;  // (name, value), `__name__` included
  double value = 0;
  int64_t timestamp_ms = 0;

  bool operator==(const RemoteWriteSample&) const = default;
};

// The WriteRequest holding one TimeSeries of one Sample per element, labels sorted by name.
std::string EncodeWriteRequest(std::span<const RemoteWriteSample> samples);

// Reads a WriteRequest: every sample of every series, each with its series' labels in the
// order written. Unknown fields are skipped by their wire type (so metadata, exemplars and
// histograms of newer senders are ignored). Errors: a truncated or malformed message (a varint
// past 10 bytes, a length past the end, wire types 3, 4, 6 or 7, a field of the wrong type).
// For tests and the fuzz target: hammer only sends.
Result<std::vector<RemoteWriteSample>> DecodeWriteRequest(std::string_view bytes);

// Snappy block format (not the framing format), through libsnappy.
std::string SnappyCompress(std::string_view bytes);
// Errors: not a valid Snappy block, or one that would expand beyond `max_bytes`.
Result<std::string> SnappyUncompress(std::string_view bytes, size_t max_bytes);

}  // namespace hammer::stats
