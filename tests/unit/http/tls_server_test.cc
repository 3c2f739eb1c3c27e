// TLS termination in the HTTP server (TlsServerContext + ServerConnection's handshake) against
// two real TLS clients: a blocking OpenSSL client written here (so each test controls ALPN,
// sessions and raw bytes) and the engine's own HttpClient. Certificates come from a CA made at
// test time (TestPki). The server runs on its own loop thread on a kernel-chosen port.
#include "hammer/http/tls_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/bn.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "hammer/http/client.h"
#include "hammer/http/request_writer.h"
#include "hammer/http/server.h"
#include "hammer/http/url.h"
#include "hammer/net/event_loop.h"
#include "hammer/net/loop_group.h"
#include "hammer/net/resolver.h"
#include "test_pki.h"
#include "tls_harness.h"

namespace hammer::http {
namespace {

using hammer::testing::ConnectTcp;
using hammer::testing::Eventually;
using hammer::testing::TlsProbe;

constexpr Nanos kGuard = 10 * kSecond;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Reads until the peer closes (or the receive timeout); true when it closed.
bool WaitForClose(int fd) {
  char buf[4096];
  while (true) {
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n == 0) return true;
    if (n < 0) return errno == ECONNRESET;
  }
}

class EchoTargetHandler final : public RequestHandler {
 public:
  void OnRequest(const IncomingRequest& request, Responder responder) override {
    responder.Respond(200, "text/plain", "ok " + std::string(request.head.target) + "\n");
  }
};

// The echo target behind a TLS listener (a base, so that the handler outlives the server).
struct EchoTarget {
  EchoTargetHandler handler;
};
class TlsServer : private EchoTarget, public hammer::testing::TlsTestServer {
 public:
  explicit TlsServer(const TlsServerOptions& options, ServerOptions server = {})
      : hammer::testing::TlsTestServer(options, &handler, server) {}
};

using TlsServerTest = hammer::testing::TlsSuite;

TEST_F(TlsServerTest, HandshakeThenHttpOverTlsWithAlpnHttp11) {
  TlsServer server(Options());
  TlsProbe probe(server.port, pki_->ca_file(), {"h2", "http/1.1"});
  ASSERT_TRUE(probe.ok());
  EXPECT_EQ(probe.alpn(), "http/1.1");  // h2 is not in the server's list (yet)
  EXPECT_EQ(probe.serial(), "1001");
  EXPECT_EQ(probe.Get("/a"), "ok /a\n");
  EXPECT_EQ(probe.Get("/b"), "ok /b\n");  // keep-alive: same connection, same handshake
  TlsServerStats stats = server.context->stats();
  EXPECT_EQ(stats.handshakes, 1u);
  EXPECT_EQ(stats.resumed, 0u);
  EXPECT_EQ(stats.handshake_failures(), 0u);
  EXPECT_NE(stats.certificate.find("serial 1001"), std::string::npos) << stats.certificate;
  EXPECT_GT(stats.not_after_unix, 0);
}

TEST_F(TlsServerTest, ClientWithoutAlpnGetsHttp11) {
  TlsServer server(Options());
  TlsProbe probe(server.port, pki_->ca_file(), {});
  ASSERT_TRUE(probe.ok());
  EXPECT_EQ(probe.alpn(), "");
  EXPECT_EQ(probe.Get("/"), "ok /\n");
}

TEST_F(TlsServerTest, ClientOfferingNoProtocolOfTheListIsRefusedAndCounted) {
  TlsServer server(Options());
  TlsProbe probe(server.port, pki_->ca_file(), {"h2", "spdy/3"});
  EXPECT_FALSE(probe.ok());
  EXPECT_TRUE(Eventually([&] { return server.context->stats().failed_error == 1; }));
  EXPECT_EQ(server.context->stats().handshakes, 0u);
}

TEST_F(TlsServerTest, TheServersAlpnPreferenceDecides) {
  TlsServerOptions options = Options();
  options.alpn = {"h2", "http/1.1"};
  TlsServer server(options);
  TlsProbe both(server.port, pki_->ca_file(), {"http/1.1", "h2"});
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(both.alpn(), "h2");
  TlsProbe old_client(server.port, pki_->ca_file(), {"http/1.1"});
  ASSERT_TRUE(old_client.ok());
  EXPECT_EQ(old_client.alpn(), "http/1.1");
}

TEST_F(TlsServerTest, SessionsResume) {
  TlsServer server(Options());
  SSL_SESSION* session = nullptr;
  {
    TlsProbe first(server.port, pki_->ca_file());
    ASSERT_TRUE(first.ok());
    ASSERT_EQ(first.Get("/"), "ok /\n");  // TLS 1.3 tickets arrive after the handshake
    session = first.TakeSession();
  }
  TlsProbe second(server.port, pki_->ca_file(), {"http/1.1"}, session);
  SSL_SESSION_free(session);
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second.resumed());
  EXPECT_EQ(second.Get("/"), "ok /\n");
  EXPECT_TRUE(Eventually([&] { return server.context->stats().resumed == 1; }));
  EXPECT_EQ(server.context->stats().handshakes, 2u);
}

TEST_F(TlsServerTest, ReloadServesTheNewCertificateAndKeepsOpenConnections) {
  hammer::testing::LeafFiles files = pki_->IssueLeaf("reloaded", "DNS:localhost", 0x2001);
  TlsServerOptions options = Options();
  options.cert_file = files.cert;
  options.key_file = files.key;
  TlsServer server(options);
  TlsProbe before(server.port, pki_->ca_file());
  ASSERT_TRUE(before.ok());
  ASSERT_EQ(before.serial(), "2001");
  ASSERT_EQ(before.Get("/before"), "ok /before\n");
  SSL_SESSION* session = before.TakeSession();

  pki_->IssueLeaf("reloaded", "DNS:localhost", 0x2002);  // same files, new certificate and key
  ASSERT_TRUE(server.context->Reload().ok());

  TlsProbe after(server.port, pki_->ca_file());
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after.serial(), "2002");
  // The connection made before the reload keeps its certificate and keeps being served.
  EXPECT_EQ(before.Get("/still"), "ok /still\n");
  // Ticket keys carry over: a session from before the reload still resumes.
  TlsProbe resumed(server.port, pki_->ca_file(), {"http/1.1"}, session);
  SSL_SESSION_free(session);
  ASSERT_TRUE(resumed.ok());
  EXPECT_TRUE(resumed.resumed());
  TlsServerStats stats = server.context->stats();
  EXPECT_EQ(stats.reloads, 1u);
  EXPECT_EQ(stats.reload_failures, 0u);
  EXPECT_NE(stats.certificate.find("serial 2002"), std::string::npos) << stats.certificate;
}

TEST_F(TlsServerTest, BadReloadKeepsThePreviousCertificateAndIsCounted) {
  hammer::testing::LeafFiles files = pki_->IssueLeaf("flaky", "DNS:localhost", 0x3001);
  TlsServerOptions options = Options();
  options.cert_file = files.cert;
  options.key_file = files.key;
  TlsServer server(options);
  std::string good_key = ReadFile(files.key);

  // A new certificate whose key was not installed: the pair does not match.
  pki_->IssueLeaf("flaky", "DNS:localhost", 0x3002);
  pki_->WriteFile("flaky.key", good_key);
  Status mismatch = server.context->Reload();
  ASSERT_FALSE(mismatch.ok());
  EXPECT_NE(mismatch.message().find("does not match"), std::string::npos) << mismatch.message();

  // A certificate file that is not PEM at all.
  pki_->WriteFile("flaky.pem", "not a certificate\n");
  Status garbage = server.context->Reload();
  ASSERT_FALSE(garbage.ok());
  EXPECT_NE(garbage.message().find("cannot load certificate from " + files.cert), std::string::npos)
      << garbage.message();

  TlsProbe probe(server.port, pki_->ca_file());
  ASSERT_TRUE(probe.ok());
  EXPECT_EQ(probe.serial(), "3001");
  EXPECT_EQ(probe.Get("/"), "ok /\n");
  TlsServerStats stats = server.context->stats();
  EXPECT_EQ(stats.reloads, 0u);
  EXPECT_EQ(stats.reload_failures, 2u);
  EXPECT_NE(stats.certificate.find("serial 3001"), std::string::npos) << stats.certificate;
}

TEST_F(TlsServerTest, CreateNamesTheFileAtFault) {
  TlsServerOptions missing = Options();
  missing.cert_file = pki_->dir() + "/absent.pem";
  Result<std::shared_ptr<TlsServerContext>> r = TlsServerContext::Create(missing);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("cannot load certificate from " + missing.cert_file),
            std::string::npos)
      << r.status().message();

  hammer::testing::LeafFiles other = pki_->IssueLeaf("unrelated", "DNS:localhost", 0x4001);
  TlsServerOptions mismatched = Options();
  mismatched.key_file = other.key;
  r = TlsServerContext::Create(mismatched);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("does not match"), std::string::npos) << r.status().message();

  TlsServerOptions no_key = Options();
  no_key.key_file.clear();  // the key is then read from the certificate file, which has none
  r = TlsServerContext::Create(no_key);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("cannot load private key from " + no_key.cert_file),
            std::string::npos)
      << r.status().message();

  TlsServerOptions no_alpn = Options();
  no_alpn.alpn.clear();
  EXPECT_FALSE(TlsServerContext::Create(no_alpn).ok());
}

TEST_F(TlsServerTest, CertificateAndKeyMayShareOneFile) {
  TlsServerOptions options;
  options.cert_file = pki_->WriteFile("combined.pem", ReadFile(leaf_.cert) + ReadFile(leaf_.key));
  TlsServer server(options);
  TlsProbe probe(server.port, pki_->ca_file());
  ASSERT_TRUE(probe.ok());
  EXPECT_EQ(probe.Get("/"), "ok /\n");
}

TEST_F(TlsServerTest, SilentConnectionIsClosedAtTheHandshakeDeadline) {
  TlsServerOptions options = Options();
  options.handshake_timeout = 200 * kMillisecond;
  TlsServer server(options);
  int fd = ConnectTcp(server.port);
  ASSERT_GE(fd, 0);
  EXPECT_TRUE(WaitForClose(fd));  // the receive timeout (5 s) would make this false
  close(fd);
  EXPECT_TRUE(Eventually([&] { return server.context->stats().failed_timeout == 1; }));
  EXPECT_EQ(server.context->stats().failed_error, 0u);
}

// The first head's deadline counts from the accept, handshake included: a client slow at the
// handshake cannot add handshake_timeout to header_timeout.
TEST_F(TlsServerTest, TheHeadDeadlineCountsFromTheAcceptThroughTheHandshake) {
  TlsServerOptions options = Options();
  options.handshake_timeout = 60 * kSecond;
  ServerOptions server_options;
  server_options.header_timeout = 200 * kMillisecond;
  TlsServer server(options, server_options);
  int fd = ConnectTcp(server.port);
  ASSERT_GE(fd, 0);
  EXPECT_TRUE(WaitForClose(fd));  // the receive timeout (5 s) would make this false
  close(fd);
  EXPECT_TRUE(
      Eventually([&] { return server.resources->rejected(Rejection::kHeaderTimeout) == 1; }));
  EXPECT_EQ(server.context->stats().failed_timeout, 0u);
}

// A client that completes the handshake and then sends nothing is closed at the head deadline.
TEST_F(TlsServerTest, SilenceAfterTheHandshakeIsAHeaderTimeout) {
  ServerOptions server_options;
  server_options.header_timeout = 300 * kMillisecond;
  TlsServer server(Options(), server_options);
  TlsProbe probe(server.port, pki_->ca_file());
  ASSERT_TRUE(probe.ok());
  // Nothing is sent after the handshake: closed at the deadline, counted once.
  EXPECT_TRUE(
      Eventually([&] { return server.resources->rejected(Rejection::kHeaderTimeout) == 1; }));
  EXPECT_EQ(server.context->stats().failed_timeout, 0u);
}

TEST_F(TlsServerTest, PlainHttpOnTheTlsPortIsAHandshakeError) {
  TlsServer server(Options());
  int fd = ConnectTcp(server.port);
  ASSERT_GE(fd, 0);
  std::string request = "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n";
  ASSERT_EQ(send(fd, request.data(), request.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(request.size()));
  EXPECT_TRUE(WaitForClose(fd));
  close(fd);
  EXPECT_TRUE(Eventually([&] { return server.context->stats().failed_error == 1; }));
}

TEST_F(TlsServerTest, ClientLeavingMidHandshakeIsCountedAsClosed) {
  TlsServer server(Options());
  int fd = ConnectTcp(server.port);
  ASSERT_GE(fd, 0);
  close(fd);
  EXPECT_TRUE(Eventually([&] { return server.context->stats().failed_closed == 1; }));
  EXPECT_EQ(server.context->stats().failed_error, 0u);
}

// The engine's client against the TLS server: verification by name, session resumption.
class EngineFetch final : public ResponseHandler {
 public:
  EngineFetch(HttpClient* client, const std::string& url_text, HeaderList headers = {}) {
    Result<Url> url = ParseUrl(url_text);
    EXPECT_TRUE(url.ok());
    head_ = SerializeRequestHead("GET", *url, headers, 0);
    request_.origin = client->GetOrigin(*url);
    request_.head = head_;
  }
  const ClientRequest& request() const { return request_; }
  void OnResponseBody(std::string_view data) override { body.append(data); }
  void OnResponseComplete(const ExchangeResult& r) override {
    result = r;
    if (then) then();
  }
  std::string body;
  ExchangeResult result;
  std::function<void()> then;

 private:
  std::string head_;
  ClientRequest request_;
};

// Sends the fetches one after another on `loop` and runs it until the last completes.
bool RunInOrder(net::EventLoop& loop, HttpClient& client, std::vector<EngineFetch*> fetches) {
  for (size_t i = 0; i < fetches.size(); ++i) {
    EngineFetch* next = i + 1 < fetches.size() ? fetches[i + 1] : nullptr;
    fetches[i]->then = [&loop, &client, next] {
      if (next != nullptr) {
        client.Send(next->request(), next);
      } else {
        loop.Stop();
      }
    };
  }
  client.Send(fetches.front()->request(), fetches.front());
  bool guard_fired = false;
  net::Timer guard(&loop, [&] {
    guard_fired = true;
    loop.Stop();
  });
  guard.ArmAt(loop.UpdateNow() + kGuard);
  loop.Run();
  return !guard_fired;
}

TEST_F(TlsServerTest, EngineClientVerifiesByNameAndResumesOnReconnect) {
  TlsServer server(Options());
  net::EventLoop loop;
  ASSERT_TRUE(loop.Init().ok());
  net::Resolver resolver(1);
  ClientOptions options;
  options.tls.ca_file = pki_->ca_file();
  HttpClient client(&loop, &resolver, options);
  std::string url = "https://localhost:" + std::to_string(server.port) + "/x";
  // Connection: close makes each request open (and resume) a new connection.
  EngineFetch first(&client, url, {{"Connection", "close"}});
  EngineFetch second(&client, url, {{"Connection", "close"}});
  ASSERT_TRUE(RunInOrder(loop, client, {&first, &second}));
  EXPECT_FALSE(first.result.failure) << first.result.detail;
  EXPECT_FALSE(second.result.failure) << second.result.detail;
  EXPECT_EQ(second.body, "ok /x\n");
  EXPECT_EQ(client.tls_counters().handshakes, 2u);
  EXPECT_EQ(client.tls_counters().resumed, 1u);
  EXPECT_TRUE(Eventually([&] { return server.context->stats().resumed == 1; }));
}

TEST_F(TlsServerTest, EngineClientRefusesACertificateForAnotherName) {
  hammer::testing::LeafFiles other = pki_->IssueLeaf("elsewhere", "DNS:other.test", 0x5001);
  TlsServerOptions options;
  options.cert_file = other.cert;
  options.key_file = other.key;
  TlsServer server(options);
  net::EventLoop loop;
  ASSERT_TRUE(loop.Init().ok());
  net::Resolver resolver(1);
  ClientOptions client_options;
  client_options.tls.ca_file = pki_->ca_file();
  HttpClient client(&loop, &resolver, client_options);
  EngineFetch fetch(&client, "https://localhost:" + std::to_string(server.port) + "/");
  ASSERT_TRUE(RunInOrder(loop, client, {&fetch}));
  ASSERT_TRUE(fetch.result.failure);
  EXPECT_EQ(*fetch.result.failure, Failure::kTls);
  EXPECT_NE(fetch.result.detail.find("certificate verification failed"), std::string::npos)
      << fetch.result.detail;
  // The server saw the client's alert.
  EXPECT_TRUE(Eventually([&] { return server.context->stats().failed_error == 1; }));
}

TEST_F(TlsServerTest, ClientConfigNamesTheFileAtFault) {
  TlsOptions key_only;
  key_only.client_key = leaf_.key;
  EXPECT_FALSE(TlsClientConfig::Create(key_only).ok());

  hammer::testing::LeafFiles client = pki_->IssueLeaf("client", "DNS:client.test", 0x6001, true);
  hammer::testing::LeafFiles unrelated =
      pki_->IssueLeaf("unrelated-client", "DNS:x.test", 0x6002, true);
  TlsOptions mismatched;
  mismatched.client_cert = client.cert;
  mismatched.client_key = unrelated.key;
  Result<std::shared_ptr<const TlsClientConfig>> r = TlsClientConfig::Create(mismatched);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("does not match certificate " + client.cert),
            std::string::npos)
      << r.status().message();

  TlsOptions good;
  good.ca_file = pki_->ca_file();
  good.client_cert = client.cert;
  good.client_key = client.key;
  EXPECT_TRUE(TlsClientConfig::Create(good).ok());

  TlsOptions missing_ca;
  missing_ca.ca_file = pki_->dir() + "/no-such-ca.pem";
  r = TlsClientConfig::Create(missing_ca);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(missing_ca.ca_file), std::string::npos);
}

}  // namespace
}  // namespace hammer::http
