// hammer dark: the dark-canary forking proxy.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "cli/commands.h"
#include "hammer/base/duration.h"
#include "hammer/base/signals.h"
#include "hammer/dark/canary_verdict.h"
#include "hammer/dark/listen_reservation.h"
#include "hammer/dark/membership.h"
#include "hammer/dark/proxy_group.h"
#include "hammer/dark/zk_membership.h"

namespace hammer::cli {

namespace {

int Usage(const std::string& message) {
  return Complain("dark", message, kExitUsage);
}

// "a,b,c" -> {"a","b","c"}
std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

Result<std::vector<http::Url>> ParseUrls(const std::vector<std::string>& texts,
                                         const std::string& flag) {
  std::vector<http::Url> urls;
  for (const std::string& text : texts) {
    for (const std::string& item : SplitCommas(text)) {
      Result<http::Url> url = http::ParseUrl(item);
      if (!url.ok()) return Status::Error(flag + ": '" + item + "': " + url.status().message());
      urls.push_back(*url);
    }
  }
  return urls;
}

// "NAME=VALUE" flags, keyed by NAME.
Result<std::map<std::string, std::string>> ParseNamed(const std::vector<std::string>& items,
                                                      const std::string& flag) {
  std::map<std::string, std::string> out;
  for (const std::string& item : items) {
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size()) {
      return Status::Error(flag + ": expected NAME=VALUE, got '" + item + "'");
    }
    out[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return out;
}

Result<Nanos> DurationFlag(const std::string& text, const std::string& flag) {
  Result<Nanos> d = ParseDuration(text);
  if (!d.ok() || *d <= 0) return Status::Error(flag + ": invalid duration '" + text + "'");
  return d;
}

// Static membership from the dark flags (and an optional JSON config file).
Result<dark::StaticMembershipOptions> StaticFromFlags(
    const std::string& config_file, uint32_t regular_instances,
    const std::vector<std::string>& dark_flags, const std::vector<std::string>& instances_flags,
    const std::vector<std::string>& multiplier_flags,
    const std::vector<std::string>& strategy_flags, const std::vector<std::string>& rate_flags,
    const std::string& sampling) {
  dark::StaticMembershipOptions options;
  if (!config_file.empty()) {
    std::ifstream in(config_file);
    if (!in) return Status::Error("--config: cannot read '" + config_file + "'");
    std::stringstream text;
    text << in.rdbuf();
    Result<dark::StaticMembershipOptions> parsed = dark::ParseStaticMembershipConfig(text.str());
    if (!parsed.ok()) return Status::Error("--config: " + parsed.status().message());
    options = *parsed;
  }
  options.regular_instances = regular_instances;
  auto darks = ParseNamed(dark_flags, "--dark");
  auto instances = ParseNamed(instances_flags, "--dark-instances");
  auto multipliers = ParseNamed(multiplier_flags, "--dark-multiplier");
  auto strategies = ParseNamed(strategy_flags, "--dark-strategy");
  auto rates = ParseNamed(rate_flags, "--dark-rate");
  for (auto* r : {&darks, &instances, &multipliers, &strategies, &rates}) {
    if (!r->ok()) return r->status();
  }
  for (const auto& [name, urls_text] : *darks) {
    dark::StaticDarkCluster cluster;
    cluster.config.name = name;
    cluster.config.sampling = sampling;
    Result<std::vector<http::Url>> urls = ParseUrls({urls_text}, "--dark " + name);
    if (!urls.ok()) return urls.status();
    cluster.urls = *urls;
    options.dark.push_back(std::move(cluster));
  }
  auto find = [&](const std::string& name,
                  const std::string& flag) -> Result<dark::StaticDarkCluster*> {
    for (auto& c : options.dark) {
      if (c.config.name == name) return &c;
    }
    return Status::Error(flag + ": no dark cluster named '" + name + "' (add --dark " + name +
                         "=URL)");
  };
  for (const auto& [name, value] : *instances) {
    auto c = find(name, "--dark-instances");
    if (!c.ok()) return c.status();
    char* end = nullptr;
    long n = std::strtol(value.c_str(), &end, 10);
    if (*end != '\0' || n < 0) return Status::Error("--dark-instances: bad count '" + value + "'");
    (*c)->instances = static_cast<uint32_t>(n);
  }
  for (const auto& [name, value] : *multipliers) {
    auto c = find(name, "--dark-multiplier");
    if (!c.ok()) return c.status();
    char* end = nullptr;
    double m = std::strtod(value.c_str(), &end);
    if (*end != '\0' || m < 0) return Status::Error("--dark-multiplier: bad value '" + value + "'");
    (*c)->config.multiplier = m;
  }
  for (const auto& [name, value] : *strategies) {
    auto c = find(name, "--dark-strategy");
    if (!c.ok()) return c.status();
    if (value != "relative" && value != "identical" && value != "constant-qps") {
      return Status::Error("--dark-strategy: expected relative, identical or constant-qps, got '" +
                           value + "'");
    }
    (*c)->config.strategy = value;
  }
  for (const auto& [name, value] : *rates) {
    auto c = find(name, "--dark-rate");
    if (!c.ok()) return c.status();
    char* end = nullptr;
    double r = std::strtod(value.c_str(), &end);
    if (*end != '\0' || r < 0) return Status::Error("--dark-rate: bad value '" + value + "'");
    (*c)->config.target_rate = r;
  }
  for (const auto& c : options.dark) {
    if (c.config.strategy == "constant-qps" && c.config.target_rate <= 0) {
      return Status::Error("--dark-strategy " + c.config.name + "=constant-qps needs --dark-rate " +
                           c.config.name + "=R");
    }
  }
  return options;
}

// --verdict-json: FILE, or "-" for stdout (after the address lines).
Status WriteVerdict(const dark::CanaryVerdict& verdict, const std::string& path) {
  std::string json = verdict.ToJson();
  if (path == "-") {
    std::fwrite(json.data(), 1, json.size(), stdout);
    std::fflush(stdout);
    return Status::Ok();
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << json;
  out.close();
  if (!out) return Status::Error("--verdict-json: cannot write '" + path + "'");
  return Status::Ok();
}

int VerdictExitCode(dark::VerdictState state) {
  switch (state) {
    case dark::VerdictState::kPass:
      return kExitOk;
    case dark::VerdictState::kFail:
      return kExitThreshold;
    case dark::VerdictState::kInsufficient:
      return kExitInsufficient;
  }
  return kExitInsufficient;
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
      "canary=https://127.0.0.1:9444\n\n"
      "TLS: --tls-cert/--tls-key terminate TLS on --listen (TLS 1.2+, ALPN http/1.1); SIGHUP\n"
      "reloads them without dropping connections (a bad file keeps the previous ones). https\n"
      "upstreams, dark clusters and --compare-secondary are verified against the system store\n"
      "or --cacert, by the host name of their URL (also sent as SNI); the same TLS flags apply\n"
      "to all of them.",
      "hammer dark"};
  dark::DarkOptions options;
  std::vector<std::string> upstreams, dark_flags, instances_flags, multiplier_flags, strategy_flags,
      rate_flags, secondary;
  std::string membership = "static", config_file, sampling = "accumulator";
  std::string regular_cluster = "regular";
  std::string upstream_timeout = "30s", dark_timeout = "5s", connect_timeout = "5s", duration;
  std::string drain_timeout = "10s";
  std::vector<std::string> judge;
  bool no_default_judges = false;
  double verdict_alpha = dark::kDefaultVerdictAlpha;
  std::string verdict_after, verdict_json, verdict_interval = "1s";
  app.add_option("--listen", options.listen, "address to listen on (IP:PORT; port 0 = any)")
      ->capture_default_str();
  app.add_option("--upstream", upstreams, "regular upstream URL(s), comma-separated or repeated")
      ->required();
  app.add_option("--threads", options.threads, "event-loop threads")->capture_default_str();
  app.add_option("--admin", options.admin_listen,
                 "admin listener: /metrics, /hammer/dark/report, /hammer/dark/verdict, "
                 "/hammer/dark/membership; PORT alone binds 127.0.0.1, a non-loopback IP:PORT "
                 "needs --admin-token-file");
  app.add_option("--admin-token-file", options.admin_token_file,
                 "file holding a bearer token every admin request must send "
                 "(Authorization: Bearer TOKEN); required to bind --admin off loopback");
  app.add_option("--membership", membership, "static | zk://HOST:PORT/PATH")->capture_default_str();
  app.add_option("--config", config_file, "static membership from a JSON file (see README)");
  app.add_option("--regular-instances", options.regular_instances,
                 "Ns: instances of the regular cluster (static membership)")
      ->capture_default_str();
  app.add_option("--regular-cluster", regular_cluster,
                 "ZooKeeper: the regular cluster this proxy registers in (if the config "
                 "znode names none)")
      ->capture_default_str();
  app.add_option("--dark", dark_flags, "NAME=URL[,URL...]: a dark cluster and its instances");
  app.add_option("--dark-instances", instances_flags, "NAME=N: Nd (default: number of URLs)");
  app.add_option("--dark-multiplier", multiplier_flags, "NAME=M (default 1)");
  app.add_option("--dark-strategy", strategy_flags, "NAME=relative|identical|constant-qps");
  app.add_option("--dark-rate", rate_flags,
                 "NAME=R: constant-qps, requests per second each dark instance receives");
  app.add_option("--dark-sampling", sampling,
                 "accumulator (exact to +-1) | bernoulli (a coin per request, as rest.li)")
      ->capture_default_str();
  app.add_option("--identical-header", options.identical_header,
                 "identical strategy: derive the shared number from this request header");
  app.add_option("--allow", options.allow, "path regex that makes unsafe methods eligible");
  app.add_option("--deny", options.deny, "path regex never forked");
  app.add_option("--upstream-timeout", upstream_timeout, "regular side timeout")
      ->capture_default_str();
  app.add_option("--dark-timeout", dark_timeout, "dark side timeout")->capture_default_str();
  app.add_option("--connect-timeout", connect_timeout, "TCP connect timeout")
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
  bool no_forwarded_for = false;
  app.add_flag("--no-forwarded-for", no_forwarded_for,
               "do not append the client's IP to X-Forwarded-For (and Forwarded)");
  app.add_flag("--compare", options.compare, "compare dark responses with the regular ones");
  app.add_option("--compare-secondary", secondary,
                 "a second regular instance: its differences are noise, cancelled Diffy-style");
  app.add_option("--compare-header", options.compare_headers, "response header to compare");
  app.add_option("--compare-ignore", options.compare_ignore,
                 "field path prefix never reported (e.g. body.meta.generated_at)");
  CLI::Option* tls_cert =
      app.add_option("--tls-cert", options.listener_tls.cert_file,
                     "terminate TLS on --listen with this PEM certificate chain (leaf first); "
                     "reloaded with --tls-key on SIGHUP");
  app.add_option("--tls-key", options.listener_tls.key_file,
                 "the private key of --tls-cert (PEM, unencrypted; default: read from the "
                 "--tls-cert file)")
      ->needs(tls_cert);
  app.add_option("--cacert", options.upstream_tls.ca_file,
                 "https upstreams and dark clusters: trust these CA certificates (PEM) instead "
                 "of the system store");
  app.add_flag(
      "--insecure", [&](int64_t) { options.upstream_tls.verify = false; },
      "https upstreams and dark clusters: do not verify their certificates or host names");
  CLI::Option* client_cert = app.add_option(
      "--client-cert", options.upstream_tls.client_cert,
      "https upstreams and dark clusters: present this PEM certificate when asked (mTLS)");
  app.add_option("--client-key", options.upstream_tls.client_key,
                 "the private key of --client-cert (PEM, unencrypted; default: read from the "
                 "--client-cert file)")
      ->needs(client_cert);
  app.add_option("--judge", judge,
                 "canary verdict rule, --threshold syntax (repeatable; implies --compare): "
                 "diff_rate<1%, error_increase<0.1%, latency_increase<10%+1ms, p99_ratio<2, "
                 "samples>=500, p99<250ms (dark side); @GROUP for one endpoint group. Replaces "
                 "the default on the same metric");
  app.add_flag("--no-default-judges", no_default_judges,
               "judge by the --judge rules only, without the defaults (samples>=500 "
               "diff_rate<1% error_increase<0.1% latency_increase<10%+1ms)");
  app.add_option("--verdict-alpha", verdict_alpha,
                 "significance level of the verdict's tests (per endpoint group: divided by "
                 "the number of groups)")
      ->capture_default_str();
  app.add_option("--verdict-after", verdict_after,
                 "judge the canary once this long has passed, then stop and exit 0 (pass), 3 "
                 "(fail) or 4 (insufficient); implies --compare");
  app.add_option("--verdict-interval", verdict_interval,
                 "latency_increase fails only when the dark side is slower in most intervals "
                 "of this length (a passing stall is not a slowdown)")
      ->capture_default_str();
  app.add_option("--verdict-json", verdict_json,
                 "write the verdict as JSON to this file ('-': stdout) when the proxy stops");
  app.add_option("--seed", options.seed, "random seed (0: random)");
  app.add_option("--duration", duration, "stop by itself after this long (then drain)");
  app.add_option("--drain-timeout", drain_timeout,
                 "on SIGTERM/SIGINT (or the end of --duration or --verdict-after): stop accepting, "
                 "abandon the dark copies in flight, let the requests in flight finish for at "
                 "most this long, then close what is left (counted); a second signal stops at once")
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }
  Result<std::vector<http::Url>> upstream_urls = ParseUrls(upstreams, "--upstream");
  if (!upstream_urls.ok()) return Usage(upstream_urls.status().message());
  options.upstreams = *upstream_urls;
  Result<std::vector<http::Url>> secondary_urls = ParseUrls(secondary, "--compare-secondary");
  if (!secondary_urls.ok()) return Usage(secondary_urls.status().message());
  options.compare_secondary = *secondary_urls;
  if (sampling != "accumulator" && sampling != "bernoulli") {
    return Usage("--dark-sampling: expected accumulator or bernoulli");
  }
  options.bernoulli = sampling == "bernoulli";
  options.forwarded_for = !no_forwarded_for;
  for (auto [text, target, flag] :
       {std::tuple{&upstream_timeout, &options.upstream_timeout, "--upstream-timeout"},
        std::tuple{&dark_timeout, &options.dark_timeout, "--dark-timeout"},
        std::tuple{&connect_timeout, &options.connect_timeout, "--connect-timeout"},
        std::tuple{&drain_timeout, &options.drain_timeout, "--drain-timeout"}}) {
    Result<Nanos> d = DurationFlag(*text, flag);
    if (!d.ok()) return Usage(d.status().message());
    *target = *d;
  }
  Nanos run_for = -1;
  if (!duration.empty()) {
    Result<Nanos> d = DurationFlag(duration, "--duration");
    if (!d.ok()) return Usage(d.status().message());
    run_for = *d;
  }
  Nanos judge_after = -1;
  if (!verdict_after.empty()) {
    if (!duration.empty()) return Usage("--verdict-after stops the proxy: leave out --duration");
    Result<Nanos> d = DurationFlag(verdict_after, "--verdict-after");
    if (!d.ok()) return Usage(d.status().message());
    run_for = judge_after = *d;
  }
  Result<Nanos> interval = DurationFlag(verdict_interval, "--verdict-interval");
  if (!interval.ok()) return Usage(interval.status().message());
  options.verdict_interval = *interval;
  Result<dark::VerdictRules> rules =
      dark::VerdictRules::Make(judge, !no_default_judges, verdict_alpha);
  if (!rules.ok()) return Usage(rules.status().message());
  options.verdict = *rules;
  bool judging = judge_after > 0 || !verdict_json.empty() || !judge.empty();
  if (judging) options.compare = true;
  // Port 0 is resolved now, so a ZooKeeper registration can carry the real address.
  Result<dark::ListenReservation> reservation = dark::ListenReservation::Reserve(options.listen);
  if (!reservation.ok()) return Usage(reservation.status().message());
  options.listen = reservation->address();

  const bool tls = options.listener_tls.enabled();
  BlockShutdownSignals(/*reload=*/tls);
  std::unique_ptr<dark::Membership> source;
  if (membership == "static") {
    auto static_options =
        StaticFromFlags(config_file, options.regular_instances, dark_flags, instances_flags,
                        multiplier_flags, strategy_flags, rate_flags, sampling);
    if (!static_options.ok()) return Usage(static_options.status().message());
    source = std::make_unique<dark::StaticMembership>(*static_options);
  } else if (membership.rfind("zk://", 0) == 0) {
    dark::ZkMembershipOptions zk;
    zk.regular_cluster = regular_cluster;
    zk.register_url = (tls ? "https://" : "http://") + options.listen;
    zk.start_timeout = 10 * kSecond;
    auto started = dark::ZkMembership::Start(membership, zk);
    if (!started.ok()) return Usage("--membership: " + started.status().message());
    source = std::move(*started);
  } else {
    return Usage("--membership: expected static or zk://HOST:PORT/PATH, got '" + membership + "'");
  }
  auto group = dark::DarkProxyGroup::Start(options, source.get());
  if (!group.ok()) return Usage(group.status().message());
  reservation->Release();
  std::printf("%s\n", (*group)->address().ToString().c_str());
  if (!options.admin_listen.empty())
    std::printf("%s\n", (*group)->admin_address().ToString().c_str());
  std::fflush(stdout);
  dark::DarkProxyGroup* proxy = group->get();
  auto reload = [proxy] {
    Result<std::string> reloaded = proxy->ReloadTls();
    if (!reloaded.ok()) {
      std::fprintf(stderr, "hammer dark: TLS reload failed, keeping the previous certificate: %s\n",
                   reloaded.status().message().c_str());
      return;
    }
    std::fprintf(stderr, "hammer dark: TLS certificate reloaded: %s\n", reloaded->c_str());
  };
  MonoNanos started = MonoNow();
  int signal = WaitForShutdownSignal(run_for, tls ? std::function<void()>(reload) : nullptr);
  int exit_code = kExitOk;
  if (judging) {
    // Judged before draining: the drain abandons the dark copies in flight.
    dark::CanaryVerdict verdict = (*group)->JudgeNow();
    if (judge_after > 0 && signal != 0) {
      verdict.CutShort("interrupted by signal " + std::to_string(signal) + " after " +
                       FormatDuration(MonoNow() - started) + ", before --verdict-after " +
                       verdict_after);
    }
    std::fputs(("hammer dark: verdict " + std::string(dark::VerdictStateName(verdict.state)) +
                "\n" + verdict.Summary())
                   .c_str(),
               stderr);
    if (!verdict_json.empty()) {
      if (Status written = WriteVerdict(verdict, verdict_json); !written.ok()) {
        (*group)->Stop();
        return Complain("dark", written.message(), kExitFailure);
      }
    }
    if (judge_after > 0) exit_code = VerdictExitCode(verdict.state);
  }
  bool drained = (*group)->Drain(options.drain_timeout, [] {
    return WaitForShutdownSignal(10 * kMillisecond) != 0;  // a second signal: stop at once
  });
  std::fprintf(stderr, "hammer dark: %s\n%s",
               drained ? "stopped: every request in flight was answered"
                       : "stopped: requests still in flight were abandoned",
               (*group)->Summary().c_str());
  return exit_code;
}

}  // namespace hammer::cli
