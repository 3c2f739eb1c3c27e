#include "hammer/dark/admin_access.h"

#include <fstream>
#include <sstream>

#include "hammer/http/message.h"

namespace hammer::dark {

namespace {

// Every byte is looked at whatever the first difference is; only the lengths leak, and a
// token's length is no secret worth keeping.
bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i)
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace

Result<net::SocketAddress> AdminAddress(std::string_view admin, bool has_token) {
  Result<net::SocketAddress> address =
      net::SocketAddress::Parse(net::SocketAddress::LoopbackIfPortOnly(admin));
  if (!address.ok()) return Status::Error("--admin: " + address.status().message());
  if (!address->IsLoopback() && !has_token) {
    return Status::Error("--admin: binding a non-loopback address (" + address->ToString() +
                         ") requires --admin-token-file: the report shows production responses");
  }
  return address;
}

Result<std::string> ReadAdminToken(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Error("--admin-token-file: cannot read '" + path + "'");
  std::stringstream content;
  content << in.rdbuf();
  std::string token = content.str();
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' ' ||
                            token.back() == '\t')) {
    token.pop_back();
  }
  if (token.empty()) return Status::Error("--admin-token-file: '" + path + "' is empty");
  for (char c : token) {
    if (c <= 0x20 || c >= 0x7f) {
      return Status::Error("--admin-token-file: '" + path +
                           "' must hold one token of visible ASCII characters");
    }
  }
  return token;
}

bool BearerMatches(std::optional<std::string_view> authorization, std::string_view token) {
  if (!authorization) return false;
  std::string_view value = *authorization;
  constexpr std::string_view kScheme = "bearer ";
  if (value.size() < kScheme.size() ||
      !http::EqualsIgnoreCase(value.substr(0, kScheme.size()), kScheme)) {
    return false;
  }
  value.remove_prefix(kScheme.size());
  while (!value.empty() && value.front() == ' ')
    value.remove_prefix(1);
  return ConstantTimeEquals(value, token);
}

}  // namespace hammer::dark
