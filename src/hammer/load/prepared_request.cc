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
}

}  // namespace hammer::load
