// Request serialization. A load run sends the same few requests millions of times, so heads
// are built once per target (PreparedRequest) and written as-is; nothing is formatted per send.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hammer/base/status.h"
#include "hammer/http/url.h"

namespace hammer::http {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

// Default headers hammer adds unless the user gives their own: Host, User-Agent, Accept, and
// Content-Length when there is a body (or the method usually carries one).
std::string SerializeRequestHead(std::string_view method, const Url& url, const HeaderList& headers,
                                 size_t body_size);

// Methods whose repetition has no extra effect (RFC 9110 §9.2.2): safe to retry.
bool IsIdempotentMethod(std::string_view method);

// Headers as users give them on a command line (-H/--header "Name: value", curl's syntax): the
// name is what precedes the first ':', the value what follows it without leading blanks. Errors:
// "expected 'Name: value', got '<flag>'" for a flag without a name or a ':'.
Result<HeaderList> ParseHeaderFlags(const std::vector<std::string>& flags);

}  // namespace hammer::http
