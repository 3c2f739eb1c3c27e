// Who may use the dark proxy's admin listener (/metrics, /hammer/dark/report,
// /hammer/dark/membership). The report carries samples of production responses, so the
// listener binds loopback unless told otherwise, and binding any other address requires a
// bearer token (--admin-token-file): every admin request must then carry
// `Authorization: Bearer <token>`, compared in constant time; anything else gets 401 with
// `WWW-Authenticate: Bearer`. A token, once given, is required on loopback too.
//
// Pure functions and a value type; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "hammer/base/status.h"
#include "hammer/net/socket.h"

namespace hammer::dark {

// The admin listener's address from --admin: "PORT" means 127.0.0.1:PORT, "IP:PORT" as given.
// A non-loopback address without a token is refused ("--admin: ... requires
// --admin-token-file").
Result<net::SocketAddress> AdminAddress(std::string_view admin, bool has_token);

// Reads the token: the file's content without trailing whitespace. Refused when the file
// cannot be read, is empty, or holds anything but visible ASCII (no spaces or controls).
Result<std::string> ReadAdminToken(const std::string& path);

// True when `authorization` is "Bearer <token>" (scheme case-insensitive). The comparison of
// the token takes the same time wherever the first difference is.
bool BearerMatches(std::optional<std::string_view> authorization, std::string_view token);

}  // namespace hammer::dark
