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
  // What sending and recording read for every request comes first, within three cache lines: a
  // list of 10,000 URLs replayed keeps 10,000 of these per worker, beyond the CPU's caches.
  std::string head;       // serialized head, ending with the blank line
  std::string_view body;  // body_storage, or a body shared by every request of the run
  const http::Origin* origin = nullptr;
  // The key's row in its worker's KeyTable, resolved by the worker when stats_generation is
  // not the table's (rows move when the table folds). A cache: loop thread only.
  mutable stats::KeyStats* stats = nullptr;
  mutable uint64_t stats_generation = kUnresolved;
  static constexpr uint64_t kUnresolved = ~uint64_t{0};
  // Slots sending it now; the RequestFeed's cache never reuses a request in flight.
  mutable uint32_t in_flight = 0;
  bool idempotent = true;
  // A gRPC call (IsGrpcRequest in grpc_answer.h): the answer's grpc-status, not only its HTTP
  // status, decides success. Its head carries "TE: trailers", added when the headers lacked it.
  bool grpc = false;
  std::string method;
  std::string key;                     // what records and statistics group by
  std::optional<std::string> invalid;  // why it cannot be sent (an invalid_url failure)
  http::Url url;
  std::string body_storage;
};

// Fills `out` for `method url` with `headers` and `body` (a view that must outlive `out`).
// `url` may be `out->url`.
void PrepareRequest(std::string_view method, const http::Url& url, const http::HeaderList& headers,
                    std::string_view body, http::HttpClient* client, PreparedRequest* out);

// A prepared request with its request target left out: requests with the same method, origin
// (scheme, host, port), headers and body differ only in their target, so their heads are the
// template's with another target spliced in. A list of distinct URLs on one host prepares a
// request for every line; this costs a copy of the head instead of writing it header by header.
// Remembers the origin by pointer (the HttpClient's, which outlives it). Loop thread only.
class RequestTemplate {
 public:
  // Makes `request` (filled by PrepareRequest for request.url) the template.
  void Learn(const PreparedRequest& request);
  // Whether the template makes `method url` (`url` on the template's origin, same method).
  bool Fits(std::string_view method, const http::Url& url) const;
  // Fills `out` exactly as PrepareRequest would for `url` with the template's method, headers
  // and body. Requires Fits(method, url). `url` may be `out->url`.
  void Fill(const http::Url& url, PreparedRequest* out) const;

 private:
  const http::Origin* origin_ = nullptr;  // null: nothing learned yet
  std::string method_;
  std::string scheme_;
  std::string host_;
  uint16_t port_ = 0;
  std::string head_after_target_;  // " HTTP/1.1\r\n" and the header block
  std::string_view body_;
  bool idempotent_ = true;
  bool grpc_ = false;
};

}  // namespace hammer::load
