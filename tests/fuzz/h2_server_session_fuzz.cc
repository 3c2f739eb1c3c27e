// H2ServerSession fed arbitrary bytes after the connection preface, as a client would send
// them: hammer's callbacks (head collection and its caps, body caps, the stream bookkeeping,
// refusals) must never crash, leak or grow without bound, whatever nghttp2 hands them. Every
// complete request is answered at once, as `hammer serve` does, so responses are produced too.
// Bodies over 1 KiB are streamed (H2RequestStream), as `hammer dark` has them: half of what
// waits is taken at the end, and the wake-ups (window updates) run before the last Produce.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hammer/http/body_stream.h"
#include "hammer/http/h2_server_session.h"
#include "hammer/net/event_loop.h"

namespace {

class AnswerAll final : public hammer::http::H2ServerSession::Visitor {
 public:
  void OnRequest(int32_t stream_id, const hammer::http::RequestHead& head, std::string_view body,
                 std::span<const hammer::http::Header>) override {
    const hammer::http::Header extra[] = {{"x-method", head.method}};
    session->Respond(stream_id, 200, extra, body);
  }
  void OnStreamedRequest(int32_t stream_id, const hammer::http::RequestHead&,
                         std::shared_ptr<hammer::http::BodyStream> body, bool /*tunnel*/) override {
    bodies.push_back(std::move(body));
    session->Respond(stream_id, 200, {}, "streamed");
  }
  void OnRefused(hammer::http::H2Refusal) override {}
  hammer::http::H2ServerSession* session = nullptr;
  std::vector<std::shared_ptr<hammer::http::BodyStream>> bodies;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hammer::net::EventLoop loop;
  if (!loop.Init().ok()) return 0;
  AnswerAll visitor;
  hammer::http::H2ServerSession::Settings settings;
  settings.stream_body_above = 1024;
  settings.loop = &loop;
  settings.max_head_bytes = 4096;
  settings.max_body_bytes = 8192;
  settings.max_buffered_bytes = 16384;
  auto session = hammer::http::H2ServerSession::Create(&visitor, settings);
  if (!session.ok()) return 0;
  visitor.session = session->get();
  std::string input = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
  input.append(reinterpret_cast<const char*>(data), size);
  // In two pieces, so that state carried across reads is exercised too.
  std::string_view all(input);
  size_t half = all.size() / 2;
  std::string out;
  // An error ends the connection; the fuzzer looks only for crashes, leaks and overruns.
  if ((*session)->Receive(all.substr(0, half)).ok() && (*session)->Produce(out).ok() &&
      (*session)->Receive(all.substr(half)).ok()) {
    for (const auto& body : visitor.bodies)
      body->Consume(body->available().size() / 2);
    loop.Defer([&loop] { loop.Stop(); });
    loop.Run();  // the streams' wake-ups
    out.clear();
    (void)(*session)->Produce(out);
  }
  return 0;
}
