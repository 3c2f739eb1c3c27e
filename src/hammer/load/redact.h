// Secrets never reach logs: --verbose and --dry-run print requests and responses through these.
// Authorization and Proxy-Authorization values become "[redacted]"; Cookie and Set-Cookie keep
// cookie names but not values.
#pragma once

#include <string>
#include <string_view>

namespace hammer::load {

// The value to print for header `name` whose value is `value`.
std::string RedactedValue(std::string_view name, std::string_view value);

// A serialized head ("Line\r\nName: value\r\n...\r\n\r\n") with secret values redacted, one
// line per header, prefixed by `prefix` ("> " for requests, "< " for responses).
std::string RedactHead(std::string_view head, std::string_view prefix);

}  // namespace hammer::load
