#include "cli/server_flags.h"

#include "hammer/base/byte_size.h"
#include "hammer/base/duration.h"

namespace hammer::cli {

void ServerLimitFlags::AddTo(CLI::App& app) {
  max_connections_flag_ = app.add_option(
      "--max-connections", max_connections_,
      "client connections open at once; over it, a new connection replaces one that has "
      "waited over 1s for a request head, or is closed at once (default: from the open-file "
      "limit, which is raised to its hard limit at start; 0: no limit)");
  max_buffered_bytes_flag_ = app.add_option(
      "--max-buffered-bytes", max_buffered_bytes_,
      "bytes held in buffers for clients, process-wide; past it new requests get 503 "
      "(default 256MiB; e.g. 64m, 1g; 0: no limit)");
  header_timeout_flag_ = app.add_option(
      "--header-timeout", header_timeout_,
      "a request head must be complete this long after the accept (first request) or after "
      "its first byte, else 408 and the connection closes (default 10s)");
}

Status ServerLimitFlags::Apply(std::optional<uint64_t>* max_connections,
                               uint64_t* max_buffered_bytes, Nanos* header_timeout) const {
  if (max_connections_flag_->count() > 0) *max_connections = max_connections_;
  if (max_buffered_bytes_flag_->count() > 0) {
    Result<uint64_t> bytes = ParseByteSize(max_buffered_bytes_);
    if (!bytes.ok()) return Status::Error("--max-buffered-bytes: " + bytes.status().message());
    *max_buffered_bytes = *bytes;
  }
  if (header_timeout_flag_->count() > 0) {
    Result<Nanos> timeout = ParseDuration(header_timeout_);
    if (!timeout.ok() || *timeout <= 0) {
      return Status::Error("--header-timeout: invalid duration '" + header_timeout_ + "'");
    }
    *header_timeout = *timeout;
  }
  return Status::Ok();
}

}  // namespace hammer::cli
