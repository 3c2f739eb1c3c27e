// ListenerContext: what the connections of one HttpListener share with it (internal to
// hammer/http): the loop, the handler, the options and resources, the read buffer the
// connections parse from at once, their table, and the counts the listener reports.
//
// Ownership: the listener owns it; it outlives the listener's connections. Threading: the
// listener's loop thread, except open_connections (a relaxed atomic, read from any thread).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "hammer/http/connection_table.h"
#include "hammer/http/server.h"

namespace hammer::http {

struct ListenerContext {
  ListenerContext(net::EventLoop* event_loop, RequestHandler* request_handler,
                  ServerOptions server_options)
      : loop(event_loop),
        handler(request_handler),
        options(std::move(server_options)),
        resources(options.resources ? options.resources : std::make_shared<ServerResources>()),
        read_buffer(kReadChunk, '\0') {}

  net::EventLoop* const loop;
  RequestHandler* const handler;
  const ServerOptions options;
  const std::shared_ptr<ServerResources> resources;
  std::string read_buffer;  // shared by the loop's connections for reads parsed at once
  ConnectionTable connections;
  uint64_t requests = 0;  // handed to the handler
  bool draining = false;
  std::atomic<size_t> open_connections{0};
};

}  // namespace hammer::http
