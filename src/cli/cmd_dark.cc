// hammer dark: the dark-canary forking proxy. Declares the flags; dark::DarkCommand does the rest.
#include <CLI/CLI.hpp>
#include <optional>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/server_flags.h"
#include "hammer/base/byte_size.h"
#include "hammer/dark/dark_command.h"

namespace hammer::cli {

namespace {

void CaptureFlags(CLI::App& app, dark::DarkFlags& flags) {
  dark::CaptureOptions& capture = flags.run.capture;
  app.add_option("--capture", capture.path,
                 "record the requests served to FILE, one JSON line each, in the JSON targets "
                 "format `hammer load --targets-format jsonl --replay` reads (method, url, "
                 "header, base64 body) plus ts (arrival, Unix microseconds), protocol, status "
                 "and latency_us; appended to, mode 0600; written by a thread of its own behind "
                 "a bounded queue, so a slow or full disk drops lines (counted in "
                 "hammer_dark_capture_dropped_total) and never delays a user. Secrets are "
                 "redacted by default: the values of Authorization, Proxy-Authorization, "
                 "Cookie, Set-Cookie and X-Api-Key, and of the query parameters token, key, "
                 "password and sig, become REDACTED")
      ->type_name("FILE");
  app.add_option("--capture-rate", capture.rate,
                 "the fraction of requests recorded, each drawn independently (0 < F <= 1)")
      ->capture_default_str()
      ->type_name("F");
  app.add_option("--capture-max-rps", capture.max_rps,
                 "record at most N requests per second, all threads together (0: no cap)")
      ->capture_default_str()
      ->type_name("N");
  app.add_option("--capture-filter", capture.filters,
                 "record only requests whose \"METHOD /path\" (the path without its query) "
                 "matches this RE2 pattern whole, e.g. '(GET|POST) /api/.*' (repeatable: any "
                 "may match)")
      ->type_name("REGEX");
  app.add_option("--capture-body-limit", flags.capture_body_limit,
                 "record request bodies up to SIZE; a longer one is recorded cut (or not at all "
                 "when it was streamed) and marked body_truncated, with its body_size")
      ->capture_default_str()
      ->type_name("SIZE");
  app.add_option("--capture-rotate", flags.capture_rotate,
                 "complete the capture file once it holds SIZE bytes (a unit in bytes: 256MiB, "
                 "1GB) or has been written for DURATION (90s, 15m, 1h), and at exit: it is "
                 "renamed atomically to STEM-YYYYmmddTHHMMSSZ.jsonl (the UTC time it was begun; "
                 "STEM is FILE without .jsonl; never overwriting) and FILE begins anew, so a "
                 "reader that takes the dated names never sees a file being written (give both "
                 "a SIZE and a DURATION to rotate at whichever comes first)")
      ->type_name("SIZE|DURATION");
  app.add_option("--capture-compress", flags.capture_compress,
                 "zstd: write the capture compressed, readable by zstdcat and by `hammer load` "
                 "as it is; every write is one zstd frame of whole lines, so a file cut by a "
                 "kill still decodes up to its last frame. The default is zstd when FILE ends in "
                 ".zst (e.g. traffic.jsonl.zst; completed files are then named "
                 "STEM-YYYYmmddTHHMMSSZ.jsonl.zst), else none")
      ->type_name("none|zstd");
  app.add_option("--capture-redact", capture.redact,
                 "also redact the header field or query parameter NAME (any case; repeatable)")
      ->type_name("NAME");
  app.add_option("--capture-keep", capture.keep,
                 "record NAME's value although it is redacted by default, e.g. Cookie "
                 "(repeatable)")
      ->type_name("NAME");
}

}  // namespace

int DarkMain(int argc, char** argv) {
  CLI::App app{
      "Dark-canary proxy: serve every request from the regular upstream(s) and fork copies to\n"
      "dark clusters at a rate proportional to cluster sizes; dark responses are discarded (or\n"
      "compared with --compare) and never delay, alter or fail the user's response.\n"
      "Prints the bound address on the first line of stdout (and the admin address on the\n"
      "second with --admin).\n\n"
      "Examples:\n"
      "  hammer dark --listen 127.0.0.1:8080 --upstream http://127.0.0.1:9001 \\\n"
      "      --dark canary=http://127.0.0.1:9101 --regular-instances 10\n"
      "  hammer dark ... --compare --compare-secondary http://127.0.0.1:9002 \\\n"
      "      --verdict-after 10m --verdict-json verdict.json   # exit 0 pass, 3 fail, 4 "
      "insufficient\n"
      "  hammer dark --listen 127.0.0.1:0 --upstream http://127.0.0.1:9001 \\\n"
      "      --membership zk://127.0.0.1:2181/hammer --admin 127.0.0.1:0\n"
      "  hammer dark --listen 127.0.0.1:8443 --tls-cert proxy.pem --tls-key proxy.key \\\n"
      "      --upstream https://127.0.0.1:9443 --cacert ca.pem --dark "
      "canary=https://127.0.0.1:9444\n"
      "  hammer dark ... --http2 --upstream-http2 --dark canary=http://127.0.0.1:9101 \\\n"
      "      --dark-http2 canary   # HTTP/2 on every side (h2c here)\n\n"
      "TLS: --tls-cert/--tls-key terminate TLS on --listen (TLS 1.2+, ALPN http/1.1, and h2\n"
      "with --http2); SIGHUP\n"
      "reloads them without dropping connections (a bad file keeps the previous ones). https\n"
      "upstreams, dark clusters and --compare-secondary are verified against the system "
      "store\n"
      "or --cacert, by the host name of their URL (also sent as SNI); the same TLS flags apply\n"
      "to all of them.",
      "hammer dark"};
  dark::DarkFlags flags;
  dark::DarkOptions& options = flags.run;
  app.add_option("--listen", options.listen,
                 "address to listen on (IP:PORT, or PORT alone for 127.0.0.1; port 0 = any)")
      ->capture_default_str();
  app.add_option("--upstream", flags.upstreams,
                 "regular upstream URL(s), comma-separated or repeated. A URL naming a host is "
                 "resolved every --upstream-dns-interval and each of its addresses is an "
                 "instance; zk://HOST:PORT[,...]/PATH/clusters/NAME (a flag of its own): each "
                 "member of that ZooKeeper cluster is one (as `hammer serve --announce` writes "
                 "them, docs/dark-znodes.md)")
      ->required();
  app.add_option("--upstream-weight", flags.upstream_weights,
                 "URL=N: an --upstream URL's instances get N times the traffic of a weight-1 "
                 "instance (1-100, default 1; repeatable)")
      ->type_name("URL=N");
  app.add_option("--upstream-dns-interval", flags.upstream_dns_interval,
                 "resolve named upstreams again this often; instances come and go without "
                 "dropping the others' connections, one that left is drained (0: a name is one "
                 "instance, resolved per connection)")
      ->capture_default_str();
  app.add_option("--health-check", options.health_check.path,
                 "PATH: GET it on every regular instance every --health-check-interval, over "
                 "the traffic's protocol and TLS; an instance failing it gets no user traffic "
                 "(with every instance failing, all get traffic); default: no active checks")
      ->type_name("PATH");
  app.add_option("--health-check-interval", flags.health_check_interval,
                 "time between two checks of an instance")
      ->capture_default_str();
  app.add_option("--health-check-timeout", flags.health_check_timeout,
                 "a check not answered within this fails")
      ->capture_default_str();
  app.add_option("--health-check-status", flags.health_check_status,
                 "the status a check expects: N or a range N-M (e.g. 200-399)")
      ->capture_default_str();
  app.add_option("--healthy-threshold", options.health_check.healthy_threshold,
                 "checks passed in a row that make an unhealthy instance healthy (a new "
                 "instance gets traffic after its first)")
      ->capture_default_str();
  app.add_option("--unhealthy-threshold", options.health_check.unhealthy_threshold,
                 "checks failed in a row that make a healthy instance unhealthy")
      ->capture_default_str();
  app.add_option("--threads", options.threads, "event-loop threads")->capture_default_str();
  app.add_option("--admin", options.admin_listen,
                 "admin listener: /metrics, /hammer/dark/report, /hammer/dark/verdict, "
                 "/hammer/dark/membership; PORT alone binds 127.0.0.1, a non-loopback IP:PORT "
                 "needs --admin-token-file");
  app.add_option("--admin-token-file", options.admin_token_file,
                 "file holding a bearer token every admin request must send "
                 "(Authorization: Bearer TOKEN); required to bind --admin off loopback")
      ->type_name("FILE");
  app.add_option("--membership", flags.membership, "static | zk://HOST:PORT/PATH")
      ->capture_default_str();
  app.add_option("--config", flags.config_file,
                 "static membership from a JSON file (docs/dark-znodes.md)")
      ->type_name("FILE");
  app.add_option("--regular-instances", options.regular_instances,
                 "Ns: instances of the regular cluster (static membership)")
      ->capture_default_str();
  app.add_option("--regular-cluster", flags.regular_cluster,
                 "ZooKeeper: the regular cluster this proxy registers in (if the config "
                 "znode names none)")
      ->capture_default_str();
  app.add_option("--dark", flags.dark, "NAME=URL[,URL...]: a dark cluster and its instances");
  app.add_option("--dark-instances", flags.dark_instances, "NAME=N: Nd (default: number of URLs)");
  app.add_option("--dark-multiplier", flags.dark_multipliers, "NAME=M (default 1)");
  app.add_option("--dark-strategy", flags.dark_strategies, "NAME=relative|identical|constant-qps");
  app.add_option("--dark-rate", flags.dark_rates,
                 "NAME=R: constant-qps, requests per second each dark instance receives");
  app.add_option("--dark-http2", options.dark_http2,
                 "NAME: copies to this dark cluster go over HTTP/2 (repeatable): h2c with prior "
                 "knowledge for http://, ALPN h2 for https://; no fallback: an instance that does "
                 "not speak it fails the copies (counted as protocol failures); with "
                 "--membership zk:// the name may appear in ZooKeeper later")
      ->type_name("NAME");
  app.add_option("--dark-sampling", flags.sampling,
                 "accumulator (exact to +-1) | bernoulli (a coin per request, as rest.li)")
      ->capture_default_str();
  app.add_option("--identical-header", options.identical_header,
                 "identical strategy: derive the shared number from this request header");
  app.add_option("--allow", options.allow, "path regex that makes unsafe methods eligible");
  app.add_option("--deny", options.deny, "path regex never forked");
  app.add_option("--dark-grpc-methods", options.dark_grpc_methods,
                 "a gRPC method that only reads, as a glob of its path (repeatable; e.g. "
                 "'/shop.Catalog/Get*'): its calls are copied to dark clusters spoken to in "
                 "HTTP/2 (--dark-http2) when the request is one message, and compared by "
                 "grpc-status and message fields (gRPC calls are all POST: without this, none "
                 "is copied; streaming calls never are)")
      ->type_name("GLOB");
  app.add_option("--upstream-timeout", flags.upstream_timeout,
                 "regular side: the longest wait for an answer to begin, and the longest pause "
                 "inside one (a long download, an event stream); a gRPC call's grpc-timeout, "
                 "when the client sends one, bounds the whole call instead")
      ->capture_default_str();
  app.add_option("--dark-timeout", flags.dark_timeout, "dark side timeout")->capture_default_str();
  app.add_option("--connect-timeout", flags.connect_timeout, "TCP connect timeout")
      ->capture_default_str();
  app.add_option("--tunnel-idle-timeout", flags.tunnel_idle_timeout,
                 "an upgraded connection (WebSocket and other Upgrade tunnels to the regular "
                 "upstream; never forked) with no byte moving either way this long is closed")
      ->capture_default_str();
  app.add_option("--lb", flags.lb,
                 "which regular instance serves a request: least-request (the less loaded of "
                 "two drawn at random) | round-robin")
      ->capture_default_str();
  app.add_option("--retries", options.retries,
                 "a user request that failed before any byte of its answer reached the client "
                 "goes to another regular instance up to N times when safe: it never reached "
                 "the upstream, or its method is idempotent (0: never)")
      ->capture_default_str();
  app.add_option("--retry-budget", options.retry_budget_percent,
                 "retries in flight at most this percent of the requests in flight (at least 3; "
                 "a retry after a failed connect is not counted)")
      ->capture_default_str();
  app.add_option("--per-try-timeout", flags.per_try_timeout,
                 "each try's own limit within --upstream-timeout (default: the whole of it)");
  app.add_option("--eject-connect-failures", options.outliers.connect_failures,
                 "consecutive connect failures that eject a regular instance (0: never)")
      ->capture_default_str();
  app.add_option("--eject-resets", options.outliers.resets,
                 "consecutive resets and timeouts that eject a regular instance (0: never)")
      ->capture_default_str();
  app.add_option("--eject-5xx", options.outliers.server_errors,
                 "consecutive 5xx answers that eject a regular instance (0: never)")
      ->capture_default_str();
  app.add_option("--ejection-time", flags.ejection_time,
                 "an ejected instance is left out this long times the number of its ejections "
                 "(at most 300s or this), then comes back")
      ->capture_default_str();
  app.add_option("--max-ejection-percent", options.outliers.max_ejection_percent,
                 "never more than this percent of the regular instances ejected at once (at "
                 "least one may be); with every instance ejected, all get traffic")
      ->capture_default_str();
  app.add_option("--dark-max-in-flight", options.dark_max_in_flight,
                 "copies in flight per dark cluster and thread; more are dropped and counted")
      ->capture_default_str();
  app.add_flag("--preserve-host", options.preserve_host,
               "forward the client's Host header (default: the upstream's)");
  app.add_flag("--trust-method-override", options.trust_method_override,
               "judge eligibility by X-HTTP-Method-Override / X-HTTP-Method / X-Method-Override "
               "(rest.li query tunnelling); default: by the real method, and an override naming "
               "an unsafe method is never forked");
  app.add_flag("--no-forwarded-for", flags.no_forwarded_for,
               "do not append the client's IP to X-Forwarded-For (and Forwarded)");
  app.add_flag("--compare", options.compare, "compare dark responses with the regular ones");
  app.add_option("--compare-secondary", flags.compare_secondary,
                 "a second regular instance: its differences are noise, cancelled Diffy-style");
  app.add_option("--compare-header", options.compare_headers, "response header to compare");
  app.add_option("--compare-ignore", options.compare_ignore,
                 "field path prefix never reported (e.g. body.meta.generated_at)");
  CLI::Option* tls_cert =
      app.add_option("--tls-cert", options.listener_tls.cert_file,
                     "terminate TLS on --listen with this PEM certificate chain (leaf first); "
                     "reloaded with --tls-key on SIGHUP")
          ->type_name("FILE");
  app.add_option("--tls-key", options.listener_tls.key_file,
                 "the private key of --tls-cert (PEM, unencrypted; default: read from the "
                 "--tls-cert file)")
      ->needs(tls_cert)
      ->type_name("FILE");
  app.add_option("--cacert", options.upstream_tls.ca_file,
                 "https upstreams and dark clusters: trust these CA certificates (PEM) instead "
                 "of the system store")
      ->type_name("FILE");
  app.add_flag(
      "--insecure", [&](int64_t) { options.upstream_tls.verify = false; },
      "https upstreams and dark clusters: do not verify their certificates or host names");
  CLI::Option* client_cert =
      app.add_option(
             "--client-cert", options.upstream_tls.client_cert,
             "https upstreams and dark clusters: present this PEM certificate when asked (mTLS)")
          ->type_name("FILE");
  app.add_option("--client-key", options.upstream_tls.client_key,
                 "the private key of --client-cert (PEM, unencrypted; default: read from the "
                 "--client-cert file)")
      ->needs(client_cert)
      ->type_name("FILE");
  app.add_option("--judge", flags.judges,
                 "canary verdict rule, --threshold syntax (repeatable; implies --compare): "
                 "diff_rate<1%, error_increase<0.1%, latency_increase<10%+1ms, p99_ratio<2, "
                 "samples>=500, p99<250ms (dark side); @GROUP for one endpoint group. Replaces "
                 "the default on the same metric");
  app.add_flag("--no-default-judges", flags.no_default_judges,
               "judge by the --judge rules only, without the defaults (samples>=500 "
               "diff_rate<1% error_increase<0.1% latency_increase<10%+1ms)");
  app.add_option("--verdict-alpha", flags.verdict_alpha,
                 "significance level of the verdict's tests (per endpoint group: divided by "
                 "the number of groups)")
      ->capture_default_str();
  app.add_option("--verdict-after", flags.verdict_after,
                 "judge the canary once this long has passed, then stop and exit 0 (pass), 3 "
                 "(fail) or 4 (insufficient); implies --compare");
  app.add_option("--verdict-interval", flags.verdict_interval,
                 "latency_increase fails only when the dark side is slower in most intervals "
                 "of this length (a passing stall is not a slowdown)")
      ->capture_default_str();
  app.add_option("--verdict-json", flags.verdict_json,
                 "write the verdict as JSON to this file ('-': stdout) when the proxy stops")
      ->type_name("FILE");
  app.add_option("--seed", options.seed, "random seed (0: random)");
  app.add_option("--duration", flags.duration, "stop by itself after this long (then drain)");
  app.add_option("--drain-timeout", flags.drain_timeout,
                 "on SIGTERM/SIGINT (or the end of --duration or --verdict-after): stop accepting, "
                 "abandon the dark copies in flight, let the requests in flight finish for at "
                 "most this long, then close what is left (counted); a second signal stops at once")
      ->capture_default_str();
  std::string stream_threshold = "1MiB";
  app.add_option("--stream-threshold", stream_threshold,
                 "request and response bodies larger than this are passed on as they arrive, "
                 "with back-pressure, instead of being held whole (a 256KiB window per "
                 "direction); requests whose body is streamed are not copied to dark clusters "
                 "(counted as hammer_dark_not_forked_total{reason=\"too_large\"}); 0: hold every "
                 "body whole")
      ->capture_default_str();
  std::string max_request_body = "16MiB";
  app.add_option("--max-request-body-bytes", max_request_body,
                 "the largest request body a client may send, held or streamed (nginx's "
                 "client_max_body_size): a content-length over it is answered 413 before the "
                 "body is read, a body of unknown length that passes it is cut off and counted "
                 "(hammer_dark_rejected_total{reason=\"body_too_large\"})")
      ->capture_default_str()
      ->type_name("SIZE");
  app.add_flag("--http2", options.http2,
               "accept HTTP/2 clients too: h2c with prior knowledge on a cleartext --listen, "
               "ALPN h2 with --tls-cert; each stream is forwarded like an HTTP/1.1 request "
               "(upstreams in HTTP/1.1 unless --upstream-http2, dark clusters unless "
               "--dark-http2); a body over --stream-threshold is passed on as it arrives, the "
               "client held at its stream window (256KiB) while the upstream is slow, and is not "
               "copied to dark clusters, as over HTTP/1.1 (bodies up to --max-request-body-bytes)");
  app.add_flag("--upstream-http2", options.upstream_http2,
               "speak HTTP/2 to the regular upstreams, whatever the client spoke: h2c with prior "
               "knowledge for http://, ALPN h2 for https:// (no fallback: an upstream that does "
               "not speak it is a 502); bodies over --stream-threshold pass as they arrive with "
               "a 256KiB window per direction, as over HTTP/1.1: a request body as the stream's "
               "DATA within the upstream's flow-control windows, a response held at the "
               "stream's window for a slow client; --compare-secondary (a second regular "
               "instance) speaks HTTP/2 too, dark clusters only with --dark-http2");
  app.add_option("--max-concurrent-streams", options.http2_max_concurrent_streams,
                 "HTTP/2: streams a client may have open at once on one connection "
                 "(SETTINGS_MAX_CONCURRENT_STREAMS)")
      ->capture_default_str()
      ->type_name("N")
      ->check(CLI::Range(1u, 1u << 20));
  CaptureFlags(app, flags);
  ServerLimitFlags limit_flags;
  limit_flags.AddTo(app);
  if (std::optional<int> exit = ParseCommandLine(app, argc, argv, "dark")) return *exit;
  if (Status s = limit_flags.Apply(&options.client_limits.max_connections,
                                   &options.client_limits.max_buffered_bytes,
                                   &options.client_limits.header_timeout);
      !s.ok()) {
    return Complain("dark", s.message(), kExitUsage);
  }
  Result<uint64_t> threshold = ParseByteSize(stream_threshold);
  if (!threshold.ok()) {
    return Complain("dark", "--stream-threshold: " + threshold.status().message(), kExitUsage);
  }
  options.stream_threshold = *threshold;
  Result<uint64_t> max_body = ParseByteSize(max_request_body);
  if (!max_body.ok() || *max_body == 0) {
    return Complain(
        "dark",
        "--max-request-body-bytes: " +
            (max_body.ok() ? std::string("must be at least 1 byte") : max_body.status().message()),
        kExitUsage);
  }
  options.max_request_body_bytes = *max_body;
  Result<dark::DarkCommand> command = dark::DarkCommand::Create(flags);
  if (!command.ok()) return Complain("dark", command.status().message(), kExitUsage);
  Result<dark::DarkOutcome> outcome = command->Run();
  if (!outcome.ok()) return Complain("dark", outcome.status().message(), kExitUsage);
  switch (*outcome) {
    case dark::DarkOutcome::kStopped:
    case dark::DarkOutcome::kVerdictPass:
      return kExitOk;
    case dark::DarkOutcome::kVerdictFail:
      return kExitThreshold;
    case dark::DarkOutcome::kVerdictInsufficient:
      return kExitInsufficient;
    case dark::DarkOutcome::kVerdictNotWritten:
      return kExitFailure;
  }
  return kExitFailure;
}

}  // namespace hammer::cli
