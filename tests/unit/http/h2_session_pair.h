// Support for tests that run an H2ClientSession against an H2ServerSession in memory (both real
// libnghttp2 sessions, only the socket left out): a client visitor that records what each
// stream received, and the loop that hands each session's bytes to the other.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "hammer/base/status.h"
#include "hammer/http/h2_client_session.h"
#include "hammer/http/h2_server_session.h"

namespace hammer::http::testing {

// A client stream that keeps its answer: the status and fields, the body, the trailers, and the
// code it closed with. Tests derive from it for what they add (a request body, counters).
struct RecordedStream : H2ClientSession::Stream {
  int status = 0;
  std::map<std::string, std::string> headers;
  std::map<std::string, std::string> trailers;
  std::string response;
  bool closed = false;
  uint32_t close_code = 0;
};

// Fills in the RecordedStream every stream of its session must be; counts GOAWAYs.
class RecordingClient : public H2ClientSession::Visitor {
 public:
  void OnStreamHead(H2ClientSession::Stream* s, const ResponseHead& head) override {
    auto* stream = static_cast<RecordedStream*>(s);
    stream->status = head.status;
    EXPECT_EQ(head.major_version, 2);
    for (const Header& h : head.headers)
      stream->headers[std::string(h.name)] = std::string(h.value);
  }
  void OnStreamData(H2ClientSession::Stream* s, std::string_view data) override {
    static_cast<RecordedStream*>(s)->response.append(data);
  }
  void OnStreamTrailers(H2ClientSession::Stream* s, std::span<const Header> trailers) override {
    for (const Header& h : trailers)
      static_cast<RecordedStream*>(s)->trailers[std::string(h.name)] = std::string(h.value);
  }
  void OnStreamClose(H2ClientSession::Stream* s, uint32_t code) override {
    auto* stream = static_cast<RecordedStream*>(s);
    stream->closed = true;
    stream->close_code = code;
  }
  void OnGoaway(int32_t, uint32_t code) override { goaway_code = code, ++goaways; }

  int goaways = 0;
  uint32_t goaway_code = 0;
};

// Moves bytes both ways until neither session has anything to say; a test failure if they never
// go quiet within `rounds`. Returns the last error the server session gave on receiving ("" when
// none): a test of a hostile client expects one, the others that it is empty.
inline std::string ExchangeUntilQuiet(H2ClientSession& client, H2ServerSession& server,
                                      int rounds = 10000) {
  std::string server_error;
  for (int round = 0; round < rounds; ++round) {
    std::string to_server, to_client;
    EXPECT_TRUE(client.Produce(to_server).ok());
    if (!to_server.empty()) {
      Status s = server.Receive(to_server);
      if (!s.ok()) server_error = s.message();
    }
    EXPECT_TRUE(server.Produce(to_client).ok());
    if (!to_client.empty()) {
      EXPECT_TRUE(client.Receive(to_client).ok());
    }
    if (to_server.empty() && to_client.empty()) return server_error;
  }
  ADD_FAILURE() << "the sessions never went quiet";
  return server_error;
}

}  // namespace hammer::http::testing
