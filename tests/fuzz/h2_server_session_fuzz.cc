// H2ServerSession fed arbitrary bytes after the connection preface, as a client would send
// them: hammer's callbacks (head collection and its caps, body caps, the stream bookkeeping,
// refusals) must never crash, leak or grow without bound, whatever nghttp2 hands them. Every
// complete request is answered at once, as `hammer serve` does, so responses are produced too.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "hammer/http/h2_server_session.h"

namespace {

class AnswerAll final : public hammer::http::H2ServerSession::Visitor {
 public:
  void OnRequest(int32_t stream_id, const hammer::http::RequestHead& head,
                 std::string_view body) override {
    const hammer::http::Header extra[] = {{"x-method", head.method}};
    session->Respond(stream_id, 200, extra, body);
  }
  void OnRefused(hammer::http::H2Refusal) override {}
  hammer::http::H2ServerSession* session = nullptr;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  AnswerAll visitor;
  hammer::http::H2ServerSession::Settings settings;
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
    out.clear();
    (void)(*session)->Produce(out);
  }
  return 0;
}
