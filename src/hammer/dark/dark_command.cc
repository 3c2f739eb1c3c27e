#include "hammer/dark/dark_command.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>

#include "hammer/base/byte_size.h"
#include "hammer/base/duration.h"
#include "hammer/base/output_file.h"
#include "hammer/base/signals.h"
#include "hammer/dark/canary_verdict.h"
#include "hammer/dark/eligibility.h"
#include "hammer/dark/listen_reservation.h"
#include "hammer/dark/proxy_group.h"
#include "hammer/dark/zk_membership.h"
#include "hammer/http/url.h"
#include "hammer/net/socket.h"
#include "hammer/net/zk_session.h"

namespace hammer::dark {

namespace {

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

// --upstream: URLs (comma-separated or repeated) into options.upstreams, and zk:// paths,
// taken whole (a ZooKeeper host list has commas of its own), into upstream_zookeeper;
// --upstream-weight URL=N gives one of the URLs its weight.
Status ParseUpstreams(const DarkFlags& flags, DarkOptions& options) {
  std::vector<std::string> urls;
  for (const std::string& item : flags.upstreams) {
    if (item.starts_with("zk://")) {
      if (Result<net::ZkUrl> zk = net::ParseZkUrl(item); !zk.ok() || zk->path.empty()) {
        return Status::Error("--upstream: '" + item +
                             "': expected zk://HOST:PORT[,HOST:PORT...]/PATH/clusters/NAME");
      }
      options.upstream_zookeeper.push_back(item);
    } else {
      urls.push_back(item);
    }
  }
  Result<std::vector<http::Url>> parsed = ParseUrls(urls, "--upstream");
  if (!parsed.ok()) return parsed.status();
  options.upstreams = *parsed;
  if (options.upstreams.empty() && options.upstream_zookeeper.empty()) {
    return Status::Error("--upstream: at least one URL is required");
  }
  options.upstream_weights.assign(options.upstreams.size(), 1);
  for (const std::string& item : flags.upstream_weights) {
    size_t eq = item.rfind('=');
    char* end = nullptr;
    long weight = eq == std::string::npos ? 0 : std::strtol(item.c_str() + eq + 1, &end, 10);
    if (eq == std::string::npos || end == nullptr || *end != '\0' || weight < 1 || weight > 100) {
      return Status::Error("--upstream-weight: expected URL=N with N from 1 to 100, got '" + item +
                           "'");
    }
    Result<http::Url> url = http::ParseUrl(item.substr(0, eq));
    if (!url.ok()) return Status::Error("--upstream-weight: " + url.status().message());
    bool found = false;
    for (size_t i = 0; i < options.upstreams.size(); ++i) {
      if (options.upstreams[i].Origin() != url->Origin()) continue;
      options.upstream_weights[i] = static_cast<uint32_t>(weight);
      found = true;
    }
    if (!found) {
      return Status::Error("--upstream-weight: '" + item.substr(0, eq) +
                           "' is none of the --upstream URLs");
    }
  }
  return Status::Ok();
}

// --health-check-status: "200" or "200-399".
Status ParseStatusRange(const std::string& text, HealthCheckOptions& check) {
  int low = 0, high = 0;
  char dash = 0;
  int fields = std::sscanf(text.c_str(), "%d%c%d", &low, &dash, &high);
  if (fields == 1) high = low;
  if ((fields != 1 && (fields != 3 || dash != '-')) || low < 100 || high > 599 || low > high ||
      text.find_first_not_of("0123456789-") != std::string::npos) {
    return Status::Error(
        "--health-check-status: expected a status (200) or a range (200-399), "
        "got '" +
        text + "'");
  }
  check.status_min = low;
  check.status_max = high;
  return Status::Ok();
}

// Static membership from the dark flags (and an optional JSON config file).
Result<StaticMembershipOptions> StaticFromFlags(const std::string& config_file,
                                                uint32_t regular_instances,
                                                const std::vector<std::string>& dark_flags,
                                                const std::vector<std::string>& instances_flags,
                                                const std::vector<std::string>& multiplier_flags,
                                                const std::vector<std::string>& strategy_flags,
                                                const std::vector<std::string>& rate_flags,
                                                const std::string& sampling) {
  StaticMembershipOptions options;
  if (!config_file.empty()) {
    std::ifstream in(config_file);
    if (!in) return Status::Error("--config: cannot read '" + config_file + "'");
    std::stringstream text;
    text << in.rdbuf();
    Result<StaticMembershipOptions> parsed = ParseStaticMembershipConfig(text.str());
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
    StaticDarkCluster cluster;
    cluster.config.name = name;
    cluster.config.sampling = sampling;
    Result<std::vector<http::Url>> urls = ParseUrls({urls_text}, "--dark " + name);
    if (!urls.ok()) return urls.status();
    cluster.urls = *urls;
    options.dark.push_back(std::move(cluster));
  }
  auto find = [&](const std::string& name, const std::string& flag) -> Result<StaticDarkCluster*> {
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

// --dark-http2 NAME: a dark cluster of the static membership, like --dark-instances NAME=N.
Status CheckDarkHttp2(const std::vector<std::string>& names,
                      const StaticMembershipOptions& membership) {
  for (const std::string& name : names) {
    auto named = [&](const StaticDarkCluster& c) { return c.config.name == name; };
    if (std::none_of(membership.dark.begin(), membership.dark.end(), named)) {
      return Status::Error("--dark-http2: no dark cluster named '" + name + "' (add --dark " +
                           name + "=URL)");
    }
  }
  return Status::Ok();
}

// With ZooKeeper the clusters come and go with its config: a name it does not know yet is
// said, not refused (the cluster speaks HTTP/2 from its first copy if it appears).
void WarnUnknownDarkHttp2(const std::vector<std::string>& names,
                          const MembershipSnapshot& snapshot) {
  for (const std::string& name : names) {
    if (snapshot.FindDark(name) != nullptr) continue;
    std::fprintf(stderr,
                 "hammer dark: --dark-http2 %s: the ZooKeeper config names no dark cluster '%s' "
                 "yet; its copies will go over HTTP/2 once it does\n",
                 name.c_str(), name.c_str());
  }
}

// --capture's companions: checked here, the patterns by CaptureWriter::Open.
Status CheckCapture(const DarkFlags& flags, CaptureOptions& capture) {
  Result<uint64_t> limit = ParseByteSize(flags.capture_body_limit);
  if (!limit.ok()) return Status::Error("--capture-body-limit: " + limit.status().message());
  capture.body_limit = *limit;
  if (!(capture.rate > 0 && capture.rate <= 1)) {
    return Status::Error("--capture-rate: expected a fraction in (0, 1], got " +
                         std::to_string(capture.rate));
  }
  for (const std::string& rotate : flags.capture_rotate) {
    // A size names its unit in bytes (256MiB, 1GB); anything else is a duration (90s, 15m, 1h).
    const bool size = !rotate.empty() && (rotate.back() == 'b' || rotate.back() == 'B');
    if (size) {
      Result<uint64_t> bytes = ParseByteSize(rotate);
      if (!bytes.ok() || *bytes == 0) {
        return Status::Error("--capture-rotate: " + (bytes.ok() ? std::string("must not be 0")
                                                                : bytes.status().message()));
      }
      capture.rotate_bytes = *bytes;
    } else {
      Result<Nanos> interval = ParseDuration(rotate);
      if (!interval.ok() || *interval < kSecond) {
        return Status::Error(
            "--capture-rotate: expected a size like 256MiB or a duration of at "
            "least 1s like 1h, got '" +
            rotate + "'");
      }
      capture.rotate_interval = *interval;
    }
  }
  const bool named_zst = capture.path.ends_with(".zst");
  if (flags.capture_compress.empty()) {
    capture.zstd = named_zst;
  } else if (flags.capture_compress == "zstd") {
    capture.zstd = true;
  } else if (flags.capture_compress != "none") {
    return Status::Error("--capture-compress: expected none or zstd, got '" +
                         flags.capture_compress + "'");
  } else if (named_zst) {
    return Status::Error("--capture-compress none: " + capture.path +
                         " is named like a zstd file; name it without .zst");
  }
  const bool companions = !flags.capture_rotate.empty() || !capture.filters.empty() ||
                          !capture.redact.empty() || !capture.keep.empty() || capture.rate != 1 ||
                          capture.max_rps != 0 || flags.capture_body_limit != "64KiB" ||
                          !flags.capture_compress.empty();
  if (!capture.enabled() && companions) {
    return Status::Error(
        "--capture-rate, --capture-max-rps, --capture-filter, "
        "--capture-body-limit, --capture-redact, --capture-keep, --capture-rotate and "
        "--capture-compress need "
        "--capture "
        "FILE");
  }
  return Status::Ok();
}

}  // namespace

Result<DarkCommand> DarkCommand::Create(const DarkFlags& flags) {
  DarkCommand command;
  DarkOptions& options = command.options_;
  options = flags.run;
  // A bare port listens on loopback, as --admin does (never on every interface by surprise).
  options.listen = net::SocketAddress::LoopbackIfPortOnly(options.listen);
  if (Status s = ParseUpstreams(flags, options); !s.ok()) return s;
  Result<std::vector<http::Url>> secondary_urls =
      ParseUrls(flags.compare_secondary, "--compare-secondary");
  if (!secondary_urls.ok()) return secondary_urls.status();
  options.compare_secondary = *secondary_urls;
  if (Status s = CheckCapture(flags, options.capture); !s.ok()) return s;
  if (flags.sampling != "accumulator" && flags.sampling != "bernoulli") {
    return Status::Error("--dark-sampling: expected accumulator or bernoulli");
  }
  options.bernoulli = flags.sampling == "bernoulli";
  options.forwarded_for = !flags.no_forwarded_for;
  for (auto [text, target, flag] :
       {std::tuple{&flags.upstream_timeout, &options.upstream_timeout, "--upstream-timeout"},
        std::tuple{&flags.dark_timeout, &options.dark_timeout, "--dark-timeout"},
        std::tuple{&flags.connect_timeout, &options.connect_timeout, "--connect-timeout"},
        std::tuple{&flags.drain_timeout, &options.drain_timeout, "--drain-timeout"},
        std::tuple{&flags.ejection_time, &options.outliers.base_ejection_time, "--ejection-time"},
        std::tuple{&flags.health_check_interval, &options.health_check.interval,
                   "--health-check-interval"},
        std::tuple{&flags.health_check_timeout, &options.health_check.timeout,
                   "--health-check-timeout"},
        std::tuple{&flags.tunnel_idle_timeout, &options.tunnel_idle_timeout,
                   "--tunnel-idle-timeout"}}) {
    Result<Nanos> d = DurationFlag(*text, flag);
    if (!d.ok()) return d.status();
    *target = *d;
  }
  if (flags.upstream_dns_interval == "0") {
    options.upstream_dns_interval = 0;
  } else {
    Result<Nanos> d = DurationFlag(flags.upstream_dns_interval, "--upstream-dns-interval");
    if (!d.ok()) return d.status();
    options.upstream_dns_interval = *d;
  }
  if (Status s = ParseStatusRange(flags.health_check_status, options.health_check); !s.ok()) {
    return s;
  }
  const std::string& check_path = options.health_check.path;
  if (options.health_check.enabled() &&
      (!check_path.starts_with('/') ||
       std::any_of(check_path.begin(), check_path.end(),
                   [](unsigned char c) { return c <= ' ' || c == 0x7f; }))) {
    return Status::Error("--health-check: expected a path starting with '/', got '" +
                         options.health_check.path + "'");
  }
  if (options.health_check.healthy_threshold < 1 || options.health_check.unhealthy_threshold < 1) {
    return Status::Error("--healthy-threshold and --unhealthy-threshold: at least 1");
  }
  if (!flags.per_try_timeout.empty()) {
    Result<Nanos> d = DurationFlag(flags.per_try_timeout, "--per-try-timeout");
    if (!d.ok()) return d.status();
    options.per_try_timeout = *d;
  }
  options.outliers.max_ejection_time =
      std::max(options.outliers.max_ejection_time, options.outliers.base_ejection_time);
  if (flags.lb == "least-request") {
    options.balance = BalancePolicy::kLeastRequest;
  } else if (flags.lb == "round-robin") {
    options.balance = BalancePolicy::kRoundRobin;
  } else {
    return Status::Error("--lb: expected least-request or round-robin, got '" + flags.lb + "'");
  }
  Result<ForkEligibility> eligibility = ForkEligibility::Create(
      options.allow, options.deny, options.trust_method_override, options.dark_grpc_methods);
  if (!eligibility.ok()) return eligibility.status();
  if (options.outliers.max_ejection_percent > 100) {
    return Status::Error("--max-ejection-percent: expected 0 to 100");
  }
  if (!flags.duration.empty()) {
    Result<Nanos> d = DurationFlag(flags.duration, "--duration");
    if (!d.ok()) return d.status();
    command.run_for_ = *d;
  }
  if (!flags.verdict_after.empty()) {
    if (!flags.duration.empty()) {
      return Status::Error("--verdict-after stops the proxy: leave out --duration");
    }
    Result<Nanos> d = DurationFlag(flags.verdict_after, "--verdict-after");
    if (!d.ok()) return d.status();
    command.run_for_ = command.judge_after_ = *d;
    command.verdict_after_text_ = flags.verdict_after;
  }
  Result<Nanos> interval = DurationFlag(flags.verdict_interval, "--verdict-interval");
  if (!interval.ok()) return interval.status();
  options.verdict_interval = *interval;
  Result<VerdictRules> rules =
      VerdictRules::Make(flags.judges, !flags.no_default_judges, flags.verdict_alpha);
  if (!rules.ok()) return rules.status();
  options.verdict = *rules;
  command.verdict_json_ = flags.verdict_json;
  command.judging_ =
      command.judge_after_ > 0 || !flags.verdict_json.empty() || !flags.judges.empty();
  if (command.judging_) options.compare = true;

  command.membership_ = flags.membership;
  command.regular_cluster_ = flags.regular_cluster;
  if (flags.membership == "static") {
    auto static_options = StaticFromFlags(flags.config_file, options.regular_instances, flags.dark,
                                          flags.dark_instances, flags.dark_multipliers,
                                          flags.dark_strategies, flags.dark_rates, flags.sampling);
    if (!static_options.ok()) return static_options.status();
    command.static_membership_ = *static_options;
    if (Status s = CheckDarkHttp2(options.dark_http2, *static_options); !s.ok()) return s;
  } else if (flags.membership.rfind("zk://", 0) != 0) {
    return Status::Error("--membership: expected static or zk://HOST:PORT/PATH, got '" +
                         flags.membership + "'");
  }
  return command;
}

Result<DarkOutcome> DarkCommand::Run() {
  // Port 0 is resolved now, so a ZooKeeper registration can carry the real address.
  Result<ListenReservation> reservation = ListenReservation::Reserve(options_.listen);
  if (!reservation.ok()) return reservation.status();
  options_.listen = reservation->address();

  const bool tls = options_.listener_tls.enabled();
  BlockShutdownSignals(/*reload=*/tls);
  std::unique_ptr<Membership> source;
  if (membership_ == "static") {
    source = std::make_unique<StaticMembership>(static_membership_);
  } else {
    ZkMembershipOptions zk;
    zk.regular_cluster = regular_cluster_;
    zk.register_url = (tls ? "https://" : "http://") + options_.listen;
    zk.start_timeout = 10 * kSecond;
    auto started = ZkMembership::Start(membership_, zk);
    if (!started.ok()) return Status::Error("--membership: " + started.status().message());
    source = std::move(*started);
    WarnUnknownDarkHttp2(options_.dark_http2, *source->Current());
  }
  if (options_.http2 && !options_.upstream_http2) {
    std::fprintf(stderr,
                 "hammer dark: warning: the regular upstreams are spoken to in HTTP/1.1, so "
                 "gRPC calls are answered UNAVAILABLE; give --upstream-http2 to pass them\n");
  }
  auto group = DarkProxyGroup::Start(options_, source.get());
  if (!group.ok()) return group.status();
  reservation->Release();
  for (const std::string& warning : (*group)->warnings())
    std::fprintf(stderr, "hammer dark: warning: %s\n", warning.c_str());
  std::printf("%s\n", (*group)->address().ToString().c_str());
  if (!options_.admin_listen.empty()) {
    std::printf("%s\n", (*group)->admin_address().ToString().c_str());
  }
  std::fflush(stdout);
  DarkProxyGroup* proxy = group->get();
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
  int signal = WaitForShutdownSignal(run_for_, tls ? std::function<void()>(reload) : nullptr);
  DarkOutcome outcome = DarkOutcome::kStopped;
  bool verdict_written = true;
  if (judging_) {
    // Judged before draining: the drain abandons the dark copies in flight.
    CanaryVerdict verdict = proxy->JudgeNow();
    if (judge_after_ > 0 && signal != 0) {
      verdict.CutShort("interrupted by signal " + std::to_string(signal) + " after " +
                       FormatDuration(MonoNow() - started) + ", before --verdict-after " +
                       verdict_after_text_);
    }
    std::fputs(("hammer dark: verdict " + std::string(VerdictStateName(verdict.state)) + "\n" +
                verdict.Summary())
                   .c_str(),
               stderr);
    // --verdict-json: FILE, or "-" for stdout (after the address lines). A sink that fails is
    // said and ends in kVerdictNotWritten, after the drain: the users in flight are answered.
    if (!verdict_json_.empty()) {
      if (Status written = WriteOutputFile("--verdict-json", verdict_json_, verdict.ToJson());
          !written.ok()) {
        std::fprintf(stderr, "hammer dark: %s\n", written.message().c_str());
        verdict_written = false;
      }
    }
    if (judge_after_ > 0) {
      switch (verdict.state) {
        case VerdictState::kPass:
          outcome = DarkOutcome::kVerdictPass;
          break;
        case VerdictState::kFail:
          outcome = DarkOutcome::kVerdictFail;
          break;
        case VerdictState::kInsufficient:
          outcome = DarkOutcome::kVerdictInsufficient;
          break;
      }
    }
  }
  bool drained = proxy->Drain(options_.drain_timeout, [] {
    return WaitForShutdownSignal(10 * kMillisecond) != 0;  // a second signal: stop at once
  });
  std::fprintf(stderr, "hammer dark: %s\n%s",
               drained ? "stopped: every request in flight was answered"
                       : "stopped: requests still in flight were abandoned",
               proxy->Summary().c_str());
  return verdict_written ? outcome : DarkOutcome::kVerdictNotWritten;
}

}  // namespace hammer::dark
