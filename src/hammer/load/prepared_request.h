// PreparedRequest: a request ready to send again and again. The head is serialized once; a
// load run sends the same few requests millions of times. Built from an input line, from a
// request file entry, or for a redirect hop.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "hammer/http/client.h"
#include "hammer/http/request_writer.h"
#include "hammer/http/url.h"
#include "hammer/stats/key_stats.h"

namespace hammer::load {

struct PreparedRequest {
  std::string key;  // what records and statistics group by
  std::string method;
  http::Url url;
  std::string head;  // serialized head, ending with the blank line
  std::string body_storage;
  std::string_view body;  // body_storage, or a body shared by every request of the run
  const http::Origin* origin = nullptr;
  bool idempotent = true;
  // The key's row in its worker's KeyTable, resolved by the worker when stats_generation is
  // not the table's (rows move when the table folds). A cache: loop thread only.
  mutable stats::KeyStats* stats = nullptr;
  mutable uint64_t stats_generation = kUnresolved;
  static constexpr uint64_t kUnresolved = ~uint64_t{0};
  // Slots sending it now; the RequestFeed's cache never reuses a request in flight.
  mutable uint32_t in_flight = 0;
  std::optional<std::string> invalid;  // why it cannot be sent (an invalid_url failure)
  // A gRPC call (IsGrpcRequest in grpc_answer.h): the answer's grpc-status, not only its HTTP
  // status, decides success. Its head carries "TE: trailers", added when the headers lacked it.
  bool grpc = false;
};

// Fills `out` for `method url` with `headers` and `body` (a view that must outlive `out`).
void PrepareRequest(std::string_view method, const http::Url& url, const http::HeaderList& headers,
                    std::string_view body, http::HttpClient* client, PreparedRequest* out);

}  // namespace hammer::load
