// Responder (server.h): a handler's way to answer one request, safe after its connection is gone.
#include "hammer/http/server.h"
#include "hammer/http/server_connection.h"

namespace hammer::http {

bool Responder::alive() const {
  return !alive_.expired();
}

bool Responder::keeps_alive() const {
  return !alive_.expired() && connection_->KeepsAlive();
}

void Responder::Respond(int status, std::string_view content_type, std::string_view body,
                        std::span<const Header> extra_headers) {
  if (alive_.expired()) return;
  connection_->Respond(sequence_, status, content_type, body, extra_headers);
}

void Responder::RespondRaw(std::string_view bytes, bool keep_alive) {
  if (alive_.expired()) return;
  connection_->RespondRaw(sequence_, bytes, keep_alive);
}

void Responder::RespondRawThenReset(std::string_view bytes) {
  if (alive_.expired()) return;
  connection_->RespondRawThenReset(sequence_, bytes);
}

void Responder::RespondInterim(int status, std::span<const Header> fields) {
  if (alive()) connection_->RespondInterim(sequence_, status, fields);
}

void Responder::Watch(RequestWatcher* watcher) {
  if (alive()) connection_->Watch(sequence_, watcher);
}

void Responder::RespondStream(std::string_view head, std::shared_ptr<BodyStream> body,
                              bool keep_alive) {
  if (alive_.expired()) {
    body->Cancel();  // nobody will ever read it
    return;
  }
  connection_->RespondStream(sequence_, head, std::move(body), keep_alive);
}

}  // namespace hammer::http
