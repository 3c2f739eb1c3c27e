// hammer serve: the embedded HTTP/1.1 and HTTP/2 target server.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/server_flags.h"
#include "hammer/base/duration.h"
#include "hammer/base/signals.h"
#include "hammer/dark/zk_announcer.h"
#include "hammer/serve/serve_group.h"

namespace hammer::cli {

int ServeMain(int argc, char** argv) {
  CLI::App app{
      "Embedded HTTP/1.1 and HTTP/2 target server for demos, tests and calibration.\n"
      "Prints the bound address (e.g. 127.0.0.1:41234) on the first line of stdout.\n\n"
      "Routes: / (200 ok), /status/N, /delay/MS, /bytes/N, /error-content, /redirect/N,\n"
      "/redirect-loop, /cookie/set, /cookie/check, /echo, /json/N (a JSON product N),\n"
      "/_hammer/stats, /fault/reset-mid-body, /fault/endless-header.\n\n"
      "Examples:\n"
      "  hammer serve --listen 127.0.0.1:0 --threads 2 --latency exp:5ms\n"
      "  hammer serve --listen 127.0.0.1:8443 --tls-cert server.pem --tls-key server.key\n\n"
      "With --tls-cert the server speaks HTTPS only (TLS 1.2+, ALPN h2 and http/1.1); SIGHUP\n"
      "reloads the certificate and key without dropping connections (a bad file keeps the old\n"
      "ones). HTTP/2: ALPN h2 with --tls-cert, prior knowledge (h2c) on cleartext, up to\n"
      "--max-concurrent-streams streams per connection; --no-http2 turns it off.",
      "hammer serve"};
  serve::ServeOptions options;
  std::string latency = "0";
  std::string duration;
  app.add_option("--listen", options.listen, "address to listen on (IP:PORT, port 0 = any)")
      ->capture_default_str();
  app.add_option("--threads", options.threads, "event-loop threads")->capture_default_str();
  app.add_option("--latency", latency,
                 "added latency per request: 5ms | uniform:1ms,10ms | exp:5ms | normal:10ms,2ms")
      ->capture_default_str();
  app.add_option("--error-rate", options.target.error_rate,
                 "fraction of requests answered 500 (0..1)")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--duration", duration, "stop by itself after this long (e.g. 30s)");
  CLI::Option* tls_cert =
      app.add_option("--tls-cert", options.tls.cert_file,
                     "serve HTTPS with this PEM certificate chain (leaf first); reloaded with "
                     "--tls-key on SIGHUP")
          ->type_name("FILE");
  app.add_option("--tls-key", options.tls.key_file,
                 "the private key of --tls-cert (PEM, unencrypted; default: read from the "
                 "--tls-cert file)")
      ->needs(tls_cert)
      ->type_name("FILE");
  bool no_http2 = false;
  app.add_flag("--no-http2", no_http2,
               "HTTP/1.1 only: no ALPN h2, and an h2c preface is a bad request");
  app.add_option("--max-concurrent-streams", options.http2_max_concurrent_streams,
                 "HTTP/2: streams a client may have open at once on one connection "
                 "(SETTINGS_MAX_CONCURRENT_STREAMS)")
      ->capture_default_str()
      ->type_name("N")
      ->check(CLI::Range(1u, 1u << 20));
  std::string mutate, announce;
  app.add_option("--announce", announce,
                 "register this instance in ZooKeeper as a member of a cluster: "
                 "zk://HOST:PORT/PATH/clusters/NAME (for hammer dark)");
  app.add_option("--mutate", mutate,
                 "FIELD=RATE: /json/N answers change FIELD (id, name, price) in this fraction of "
                 "responses, to play a dark canary with a regression");
  ServerLimitFlags limit_flags;
  limit_flags.AddTo(app);
  if (std::optional<int> exit = ParseCommandLine(app, argc, argv, "serve")) return *exit;
  Result<serve::LatencyDistribution> dist = serve::LatencyDistribution::Parse(latency);
  if (!dist.ok()) {
    std::fprintf(stderr, "hammer serve: %s\n", dist.status().message().c_str());
    return kExitUsage;
  }
  options.target.latency = *dist;
  if (Status s = limit_flags.Apply(&options.client_limits.max_connections,
                                   &options.client_limits.max_buffered_bytes,
                                   &options.client_limits.header_timeout);
      !s.ok()) {
    std::fprintf(stderr, "hammer serve: %s\n", s.message().c_str());
    return kExitUsage;
  }
  options.http2 = !no_http2;
  if (!mutate.empty()) {
    if (Status ok = serve::ParseMutateFlag(mutate, &options.target); !ok.ok()) {
      std::fprintf(stderr, "hammer serve: %s\n", ok.message().c_str());
      return kExitUsage;
    }
  }
  Nanos run_for = -1;
  if (!duration.empty()) {
    Result<Nanos> d = ParseDuration(duration);
    if (!d.ok()) {
      std::fprintf(stderr, "hammer serve: --duration: %s\n", d.status().message().c_str());
      return kExitUsage;
    }
    run_for = *d;
  }

  const bool tls = options.tls.enabled();
  BlockShutdownSignals(/*reload=*/tls);
  auto group = serve::TargetServerGroup::Start(options);
  if (!group.ok()) {
    std::fprintf(stderr, "hammer serve: %s\n", group.status().message().c_str());
    return kExitUsage;
  }
  std::unique_ptr<dark::ZkAnnouncer> announcer;
  if (!announce.empty()) {
    dark::ZkAnnouncerOptions zk;
    zk.start_timeout = 10 * kSecond;
    auto started = dark::ZkAnnouncer::Start(
        announce, (tls ? "https://" : "http://") + (*group)->address().ToString(), zk);
    if (!started.ok()) {
      std::fprintf(stderr, "hammer serve: --announce: %s\n", started.status().message().c_str());
      return kExitUsage;
    }
    announcer = std::move(*started);
  }
  std::printf("%s\n", (*group)->address().ToString().c_str());
  std::fflush(stdout);
  serve::TargetServerGroup* server = group->get();
  auto reload = [server] {
    Result<std::string> reloaded = server->ReloadTls();
    if (!reloaded.ok()) {
      std::fprintf(stderr,
                   "hammer serve: TLS reload failed, keeping the previous certificate: %s\n",
                   reloaded.status().message().c_str());
      return;
    }
    std::fprintf(stderr, "hammer serve: TLS certificate reloaded: %s\n", reloaded->c_str());
  };
  WaitForShutdownSignal(run_for, tls ? std::function<void()>(reload) : nullptr);
  (*group)->Stop();
  std::fprintf(stderr, "hammer serve: %llu requests received\n",
               static_cast<unsigned long long>((*group)->counts().requests()));
  if (tls) std::fprintf(stderr, "hammer serve: %s\n", (*group)->TlsSummary().c_str());
  return kExitOk;
}

}  // namespace hammer::cli
