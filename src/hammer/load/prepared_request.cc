#include "hammer/load/prepared_request.h"

namespace hammer::load {

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
}

bool IsGrpcRequest(const http::HeaderList& headers) {
  for (const auto& [name, value] : headers) {
    if (!http::EqualsIgnoreCase(name, "Content-Type")) continue;
    std::string_view type = value;
    constexpr std::string_view kGrpc = "application/grpc";
    return type.size() >= kGrpc.size() &&
           http::EqualsIgnoreCase(type.substr(0, kGrpc.size()), kGrpc) &&
           (type.size() == kGrpc.size() || type[kGrpc.size()] == '+' || type[kGrpc.size()] == ';');
  }
  return false;
}

}  // namespace hammer::load
