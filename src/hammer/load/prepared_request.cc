#include "hammer/load/prepared_request.h"

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
  out->url = url;
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

}  // namespace hammer::load
