#include "hammer/load/prepared_request.h"

#include <cstring>

#include "hammer/base/strings.h"
#include "hammer/load/grpc_answer.h"

namespace hammer::load {

namespace {

bool HasHeader(const http::HeaderList& headers, std::string_view name) {
  for (const auto& header : headers) {
    if (http::EqualsIgnoreCase(header.first, name)) return true;
  }
  return false;
}

}  // namespace

void PrepareRequest(std::string_view method, const http::Url& url, const http::HeaderList& headers,
                    std::string_view body, http::HttpClient* client, PreparedRequest* out) {
  out->method.assign(method);
  if (&out->url != &url) out->url = url;
  out->origin = client->GetOrigin(url);
  out->body = body;
  http::SerializeRequestHead(method, url, headers, body.size(), &out->head);
  out->idempotent = http::IsIdempotentMethod(method);
  out->invalid.reset();
  out->grpc = IsGrpcRequest(headers);
  // gRPC servers refuse a call without "te: trailers" (grpcio resets its stream): every gRPC
  // client sends it, so hammer adds it when the request file did not.
  if (out->grpc && !HasHeader(headers, "TE")) {
    out->head.insert(out->head.size() - 2, "TE: trailers\r\n");
  }
}

void RequestTemplate::Learn(const PreparedRequest& request) {
  origin_ = request.origin;
  method_ = request.method;
  scheme_ = request.url.scheme;
  host_ = request.url.host;
  port_ = request.url.port;
  // The head starts "METHOD TARGET HTTP/1.1\r\n" (http::SerializeRequestHead).
  head_after_target_.assign(request.head, method_.size() + 1 + request.url.target.size());
  body_ = request.body;
  idempotent_ = request.idempotent;
  grpc_ = request.grpc;
}

bool RequestTemplate::Fits(std::string_view method, const http::Url& url) const {
  // The host header and the origin come from scheme, host and port (a host equal as text has
  // the same IPv6 form); the rest of the head from the method, headers and body.
  return origin_ != nullptr && url.port == port_ && SameText(method, method_) &&
         SameText(url.host, host_) && SameText(url.scheme, scheme_);
}

void RequestTemplate::Fill(const http::Url& url, PreparedRequest* out) const {
  // `out` is most often the scratch request the template filled before: its method is right.
  if (!SameText(out->method, method_)) AssignText(&out->method, method_);
  if (&out->url != &url) out->url = url;
  out->origin = origin_;
  out->body = body_;
  // "METHOD TARGET" and the rest, copied into room made once.
  std::string& head = out->head;
  head.resize(method_.size() + 1 + url.target.size() + head_after_target_.size());
  char* at = head.data();
  std::memcpy(at, method_.data(), method_.size());
  at += method_.size();
  *at++ = ' ';
  std::memcpy(at, url.target.data(), url.target.size());
  at += url.target.size();
  std::memcpy(at, head_after_target_.data(), head_after_target_.size());
  out->idempotent = idempotent_;
  out->invalid.reset();
  out->grpc = grpc_;
}

}  // namespace hammer::load
