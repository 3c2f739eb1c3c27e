// JsonDiff: which fields of two HTTP responses differ, Diffy-style (github.com/twitter-archive/
// diffy: HttpLifter and compare/Difference.scala). Used by `hammer dark --compare` on
// (primary, dark) for the raw differences and on (primary, secondary) for the noise.
//
// A comparison yields field paths:
//  * "status" when the status codes differ. Bodies and headers of different statuses are not
//    compared further (Diffy keys its whole tree by status, so it reports the same way) unless
//    "status" is ignored.
//  * "header.<name>" (name lower-cased) for each header named in JsonDiffOptions::headers whose
//    values differ (all values of that name, joined with ", " in order) or that only one side has.
//  * "body" and below. When both bodies are byte-identical they are equal. When both parse as
//    JSON (simdjson), they are compared structurally:
//      - objects: keys only the left has (kMissing), keys only the right has (kExtra), and the
//        shared keys recursively; the path of key k is ".k", or ["k"] (JSON-escaped) when k
//        has characters other than letters, digits and _ $ @ -;
//      - arrays of equal length: element by element under one index-less path "[]" (so
//        "body.items[].price" counts once per response however many elements differ, and
//        counts aggregate across responses whose arrays have different lengths elsewhere); if
//        the elements are the same multiset in another order, one kOrder difference at the
//        array's path replaces the element differences;
//      - arrays of different lengths: one kSize difference at the array's path;
//      - values of different JSON types: kType; numbers compare by value (1 == 1.0);
//        strings, booleans by value.
//    When one body is JSON and the other is not: kType at "body"; when neither is: kValue at
//    "body" (bytes differ).
//  * gRPC answers (both with a gRPC content type, http/grpc_wire.h): "grpc-status" first, when
//    their grpc-status values differ (read from the headers, which carry the trailers too), and
//    nothing further then, as for "status"; then the bodies as their messages: one message is
//    "body", several an array ("body[]"); each message compared as JSON, read as JSON for
//    application/grpc+json, else read without its schema from the protobuf wire format
//    (protobuf_json.h), so that field 2 of the message in field 1 is "body.1.2". Bodies that
//    are not whole messages, or compressed ones, are compared as bytes.
//
// Left is the reference (primary), right the candidate (dark or secondary). Paths under an
// ignore prefix (the prefix itself, or the prefix followed by "." or "[") are neither reported
// nor descended into: "body.meta" ignores "body.meta.generated_at" but not "body.metadata".
//
// Work is bounded: bodies over max_body_bytes and documents nested deeper than max_depth are
// compared as bytes; at most max_nodes JSON values are visited and max_differences differences
// recorded per comparison, after which DiffResult::truncated is set and the comparison stops.
//
// Not thread-safe (it keeps two simdjson parsers to reuse their buffers): one per event loop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hammer/http/message.h"

namespace hammer::dark {

// One response as compared; views valid for the duration of Compare().
struct ResponseView {
  int status = 0;
  std::span<const http::Header> headers;
  std::string_view body;
};

enum class DifferenceKind : uint8_t {
  kValue,    // same type, different value (or different bytes for non-JSON bodies)
  kType,     // different JSON types, or JSON on one side only
  kMissing,  // the left (primary) has it, the right does not
  kExtra,    // the right has it, the left does not
  kSize,     // arrays of different lengths
  kOrder,    // arrays holding the same elements in a different order
};
std::string_view DifferenceKindName(DifferenceKind kind);  // "value", "type", "missing", ...

struct FieldDifference {
  std::string path;
  DifferenceKind kind = DifferenceKind::kValue;
  std::string left;   // short rendering of the left value (at most kMaxRenderedBytes); "" if absent
  std::string right;  // the same for the right
  uint32_t occurrences = 1;  // differences found at this path in this comparison ("[]" paths)
};

struct DiffResult {
  std::vector<FieldDifference> differences;  // one per path, in the order first found
  bool truncated = false;  // a cap stopped the comparison early: later fields were not compared

  bool empty() const { return differences.empty(); }
  const FieldDifference* Find(std::string_view path) const;
};

struct JsonDiffOptions {
  std::vector<std::string> headers;  // response header names to compare (case-insensitive)
  std::vector<std::string> ignore;   // path prefixes never reported, e.g. "body.meta.generated_at"
  size_t max_body_bytes = 16u << 20;
  size_t max_depth = 128;
  size_t max_nodes = 200'000;
  size_t max_differences = 1000;
};

inline constexpr size_t kMaxRenderedBytes = 120;

class JsonDiff {
 public:
  explicit JsonDiff(JsonDiffOptions options = {});
  ~JsonDiff();
  JsonDiff(JsonDiff&&) noexcept;
  JsonDiff& operator=(JsonDiff&&) noexcept;

  DiffResult Compare(const ResponseView& left, const ResponseView& right);

  // True when `path` is at or below one of the ignore prefixes.
  bool IsIgnored(std::string_view path) const;

  const JsonDiffOptions& options() const { return options_; }

 private:
  struct Parsers;
  JsonDiffOptions options_;
  std::unique_ptr<Parsers> parsers_;
};

}  // namespace hammer::dark
