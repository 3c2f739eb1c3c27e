// Key templates: one key for the many URLs of one endpoint, so that a report over millions of
// distinct URLs (every item, user and query has its own) still has a row per endpoint.
//
// A path segment that looks like an identifier becomes "{id}": all digits ("81237"), a UUID
// ("3f2504e0-4f89-11d3-9a0c-0305e82c3301"), 16 or more hex digits, or one of those followed by
// an extension ("81237.jpg" -> "{id}.jpg"). Other segments ("v2", "search") stay. The same
// inference serves `hammer dark`'s comparison report (EndpointKey) and the key budget of
// `hammer load` and `hammer stats` (KeyTemplate, key_table.h). Pure functions; any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace hammer::stats {

// An identifier-like path segment (see above), without its slash.
bool LooksLikeId(std::string_view segment);

// "<method> <path>" of a request target, without the query, identifier segments replaced by
// "{id}", so that /items/7 and /items/8 share one endpoint. Absolute-form targets lose their
// scheme and authority. At most 256 bytes.
std::string EndpointKey(std::string_view method, std::string_view target);

// The template of a load or stats key (load_options' --key modes: a URL, "METHOD /path", a
// path, a host, or a --key-pattern name): what comes before the path (scheme and authority, or
// the method) stays, identifier segments of the path become "{id}", every query value becomes
// "{id}" ("?ref=abc&x" -> "?ref={id}&x"), and a fragment is dropped. A key without a path (no
// '/' before its query or fragment) is its own template. Idempotent:
// KeyTemplate(KeyTemplate(k)) == KeyTemplate(k).
std::string KeyTemplate(std::string_view key);
// The same template written into `*out` (replacing what it held; `key` must not view `*out`),
// reusing its capacity: a stream of distinct keys past --max-keys templates every one.
void KeyTemplate(std::string_view key, std::string* out);

namespace internal {

// A span of a key that its template replaced with "{id}": [begin, end) of the key, and what it
// was (the spans KeyTemplater can check again without templating: a whole path segment, a query
// value; anything else is kOther).
struct ReplacedSpan {
  enum class Kind : uint8_t { kSegment, kValue, kOther };
  uint32_t begin;
  uint32_t end;
  Kind kind;
};

}  // namespace internal

// KeyTemplate for one key after another, remembering the text before the last key's path
// ("http://h:8080", "GET " or nothing): a key that starts with that text followed by '/' has
// its path start found without a search. It also remembers the shape of the last key it
// templated: the text its template kept, and the path segments and query values it replaced.
// A key with that shape (the same kept text, an identifier where a segment was replaced, any
// value where a value was) has the same template, which is copied without templating the key:
// distinct URLs of one endpoint ("/item/81237?ref=x", "/item/81238?ref=y") mostly come one
// after another. The result is exactly KeyTemplate's. A cache, not a value: one per table or
// thread.
class KeyTemplater {
 public:
  // KeyTemplate(key, out).
  void Template(std::string_view key, std::string* out);

  static constexpr size_t kMaxSpans = 8;

 private:
  // Whether `key`, whose path starts where the shaped key's did, has the shaped key's shape.
  bool SameShape(std::string_view key) const;

  std::string prefix_;  // before the last templated key's path
  std::string buffer_;  // templates are written here, then copied out: it never shrinks
  bool known_ = false;
  // The shape: the key last templated into buffer_, its template's size, and its replaced spans
  // (valid when shaped_: every span was a segment or a value, at most kMaxSpans, and nothing
  // after the last kept text, such as a fragment, was dropped).
  std::string shaped_key_;
  size_t shaped_size_ = 0;
  internal::ReplacedSpan spans_[kMaxSpans];
  size_t span_count_ = 0;
  bool shaped_ = false;
};

}  // namespace hammer::stats
