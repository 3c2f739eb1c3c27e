// RequestSpec: one request to send, as read from a targets file (vegeta's http or JSON
// targets, a HAR capture). A plain value; the readers fill it and check each field with the
// functions below, so a RequestSpec that came out of a reader can be serialized as-is.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "hammer/base/clock.h"
#include "hammer/base/status.h"
#include "hammer/http/request_writer.h"

namespace hammer::load {

struct RequestSpec {
  std::string method = "GET";
  std::string url;  // absolute http(s) URL, as written in the input (ParseUrl accepts it)
  http::HeaderList headers;
  std::string body;
  Nanos offset = -1;  // HAR: time since the first entry was started; -1 if none
  // JSON lines: the entry's `ts`, its arrival in Unix microseconds (`hammer dark --capture`
  // writes it); -1 if none. SpecSource turns it into `offset` for --replay.
  int64_t timestamp_us = -1;
  // JSON lines: `body_truncated` (a capture cut the body at its limit): not sent as is.
  bool body_truncated = false;
  // Who sent it, for --split-by connection: a capture's `conn` (the client connection), an
  // access log's client address; empty when unknown.
  std::string client;
  std::string where;  // where it came from, for messages: "targets.txt:12", "x.har:entry 3"
};

// Field checks shared by the readers. Each returns an error whose message names the bad text
// (without a location; readers prefix "file:line: ").
//
// A method is an HTTP token (RFC 9110 §5.6.2 tchar), at most 32 bytes.
Status CheckMethod(std::string_view method);
// ParseUrl must accept the URL.
Status CheckUrl(std::string_view url);
// The name is a token; the value has no control character other than tab (so no CR or LF can
// end up in a request head).
Status CheckHeader(std::string_view name, std::string_view value);

// True for a token character (RFC 9110 §5.6.2).
bool IsTokenChar(char c);

}  // namespace hammer::load
