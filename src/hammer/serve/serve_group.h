// TargetServerGroup: `hammer serve` as a library. Starts N loops on N threads, each with its
// own SO_REUSEPORT listener on the same address and its own TargetHandler, and stops them.
// Used by the serve command, by `hammer demo`, and by tests. Start() returns once every
// listener is bound, so address() is immediately usable (port 0 resolves to the real port).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hammer/base/status.h"
#include "hammer/http/server.h"
#include "hammer/net/loop_group.h"
#include "hammer/serve/target_server.h"

namespace hammer::serve {

struct ServeOptions {
  std::string listen = "127.0.0.1:8080";
  int threads = 1;
  TargetOptions target;
};

class TargetServerGroup {
 public:
  static Result<std::unique_ptr<TargetServerGroup>> Start(const ServeOptions& options);
  ~TargetServerGroup();

  const net::SocketAddress& address() const { return address_; }
  const ReceivedCounts& counts() const { return counts_; }
  // Stops the loops and joins their threads. Idempotent.
  void Stop();

 private:
  explicit TargetServerGroup(const ServeOptions& options);

  ServeOptions options_;
  net::LoopGroup loops_;
  ReceivedCounts counts_;
  std::vector<std::unique_ptr<TargetHandler>> handlers_;
  std::vector<std::unique_ptr<http::HttpListener>> listeners_;
  net::SocketAddress address_;
  bool stopped_ = false;
};

}  // namespace hammer::serve
