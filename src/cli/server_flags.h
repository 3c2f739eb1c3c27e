// The flags `hammer serve` and `hammer dark` share for what a client may make the server
// hold: --max-connections, --max-buffered-bytes, --header-timeout. Declared once so both
// commands spell and explain them alike; a flag not given leaves the library's default.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "hammer/base/clock.h"
#include "hammer/base/status.h"

namespace hammer::cli {

class ServerLimitFlags {
 public:
  // Adds the flags to `app`; their values are read by Apply after parsing.
  void AddTo(CLI::App& app);
  // Writes the values of the flags that were given. Errors name the flag.
  Status Apply(std::optional<uint64_t>* max_connections, uint64_t* max_buffered_bytes,
               Nanos* header_timeout) const;

 private:
  CLI::Option* max_connections_flag_ = nullptr;
  CLI::Option* max_buffered_bytes_flag_ = nullptr;
  CLI::Option* header_timeout_flag_ = nullptr;
  uint64_t max_connections_ = 0;
  std::string max_buffered_bytes_;
  std::string header_timeout_;
};

}  // namespace hammer::cli
