#include "hammer/serve/target_server.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <utility>

#include "hammer/base/duration.h"

namespace hammer::serve {

namespace {

constexpr uint64_t kMaxBytesRoute = 1ull << 30;

bool ParseNumber(std::string_view text, uint64_t* out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size() && !text.empty();
}

// "/status/503" with prefix "/status/" -> "503".
bool TakeSuffix(std::string_view path, std::string_view prefix, std::string_view* rest) {
  if (path.substr(0, prefix.size()) != prefix) return false;
  *rest = path.substr(prefix.size());
  return true;
}

bool HasCookie(std::string_view cookie_header, std::string_view pair) {
  size_t at = 0;
  while (at < cookie_header.size()) {
    size_t end = cookie_header.find(';', at);
    if (end == std::string_view::npos) end = cookie_header.size();
    std::string_view item = cookie_header.substr(at, end - at);
    while (!item.empty() && item.front() == ' ')
      item.remove_prefix(1);
    if (item == pair) return true;
    at = end + 1;
  }
  return false;
}

}  // namespace

Status ParseMutateFlag(const std::string& text, TargetOptions* options) {
  size_t eq = text.find('=');
  char* end = nullptr;
  double rate = eq == std::string::npos ? -1 : std::strtod(text.c_str() + eq + 1, &end);
  if (eq == std::string::npos || eq == 0 || rate < 0 || rate > 1 || *end != '\0') {
    return Status::Error("--mutate: expected FIELD=RATE (0..1), got '" + text + "'");
  }
  options->mutate_field = text.substr(0, eq);
  options->mutate_rate = rate;
  return Status::Ok();
}

std::string DemoUrlList(const std::string& base) {
  struct Weighted {
    const char* path;
    int weight;
  };
  static const Weighted kRoutes[] = {
      {"/", 40},         {"/bytes/2048", 20},   {"/delay/5", 15},
      {"/delay/20", 10}, {"/status/404", 4},    {"/status/503", 3},
      {"/echo", 5},      {"/error-content", 2}, {"/delay/50", 1},
  };
  std::string list = "# hammer demo: weighted URL list (a repeated line weighs more)\n";
  for (const Weighted& r : kRoutes) {
    for (int i = 0; i < r.weight; ++i)
      list += "http://" + base + r.path + "\n";
  }
  return list;
}

Result<LatencyDistribution> LatencyDistribution::Parse(std::string_view spec) {
  LatencyDistribution d;
  std::string_view args = spec;
  size_t colon = spec.find(':');
  std::string_view name = colon == std::string_view::npos ? "" : spec.substr(0, colon);
  if (colon != std::string_view::npos) args = spec.substr(colon + 1);
  std::string_view first = args.substr(0, args.find(','));
  std::string_view second =
      args.find(',') == std::string_view::npos ? "" : args.substr(args.find(',') + 1);
  auto bad = [&] {
    return Status::Error("invalid --latency '" + std::string(spec) +
                         "' (examples: 5ms, uniform:1ms,10ms, exp:5ms, normal:10ms,2ms)");
  };
  Result<Nanos> a = ParseDuration(first);
  if (!a.ok()) return bad();
  d.a_ = *a;
  if (name.empty() || name == "const") {
    d.kind_ = Kind::kConstant;
    if (!second.empty()) return bad();
    return d;
  }
  if (name == "exp") {
    d.kind_ = Kind::kExponential;
    return second.empty() ? Result<LatencyDistribution>(d) : bad();
  }
  Result<Nanos> b = ParseDuration(second);
  if (!b.ok()) return bad();
  d.b_ = *b;
  if (name == "uniform" && d.b_ >= d.a_) {
    d.kind_ = Kind::kUniform;
    return d;
  }
  if (name == "normal") {
    d.kind_ = Kind::kNormal;
    return d;
  }
  return bad();
}

Nanos LatencyDistribution::Sample(std::mt19937_64& rng) const {
  switch (kind_) {
    case Kind::kConstant:
      return a_;
    case Kind::kUniform:
      return std::uniform_int_distribution<Nanos>(a_, b_)(rng);
    case Kind::kExponential:
      return static_cast<Nanos>(
          std::exponential_distribution<double>(1.0 / static_cast<double>(a_ > 0 ? a_ : 1))(rng));
    case Kind::kNormal: {
      double v =
          std::normal_distribution<double>(static_cast<double>(a_), static_cast<double>(b_))(rng);
      return v > 0 ? static_cast<Nanos>(v) : 0;
    }
  }
  return 0;
}

ReceivedCounts::ReceivedCounts(int loops, const http::TlsServerContext* tls,
                               const http::ServerResources* resources)
    : slots_(static_cast<size_t>(loops)), tls_(tls), resources_(resources) {}

void ReceivedCounts::Record(int loop, std::string_view method, bool dark_header, bool http2) {
  Slot& slot = slots_[static_cast<size_t>(loop)];
  slot.requests.fetch_add(1, std::memory_order_relaxed);
  size_t index = kMethods.size() - 1;
  for (size_t i = 0; i + 1 < kMethods.size(); ++i) {
    if (kMethods[i] == method) index = i;
  }
  slot.by_method[index].fetch_add(1, std::memory_order_relaxed);
  if (dark_header) slot.dark.fetch_add(1, std::memory_order_relaxed);
  if (http2) slot.http2.fetch_add(1, std::memory_order_relaxed);
}

uint64_t ReceivedCounts::requests() const {
  uint64_t total = 0;
  for (const Slot& slot : slots_)
    total += slot.requests.load(std::memory_order_relaxed);
  return total;
}

std::string ReceivedCounts::ToJson() const {
  nlohmann::json by_method = nlohmann::json::object();
  uint64_t dark = 0;
  for (size_t i = 0; i < kMethods.size(); ++i) {
    uint64_t n = 0;
    for (const Slot& slot : slots_)
      n += slot.by_method[i].load(std::memory_order_relaxed);
    if (n > 0) by_method[std::string(kMethods[i])] = n;
  }
  uint64_t http2 = 0;
  for (const Slot& slot : slots_) {
    dark += slot.dark.load(std::memory_order_relaxed);
    http2 += slot.http2.load(std::memory_order_relaxed);
  }
  const uint64_t total = requests();
  nlohmann::json j = {{"requests", total},
                      {"by_method", by_method},
                      {"by_protocol", {{"HTTP/1.1", total - http2}, {"HTTP/2", http2}}},
                      {"by_header", {{"X-Hammer-Dark", dark}}}};
  if (tls_ != nullptr) {
    http::TlsServerStats tls = tls_->stats();
    j["tls"] = {{"handshakes", tls.handshakes},
                {"resumed", tls.resumed},
                {"handshake_failures",
                 {{"error", tls.failed_error},
                  {"closed", tls.failed_closed},
                  {"timeout", tls.failed_timeout}}},
                {"reloads", tls.reloads},
                {"reload_failures", tls.reload_failures},
                {"certificate", tls.certificate}};
  }
  if (resources_ != nullptr) {
    nlohmann::json rejected = nlohmann::json::object();
    for (size_t i = 0; i < http::kRejectionCount; ++i) {
      auto reason = static_cast<http::Rejection>(i);
      rejected[std::string(http::RejectionName(reason))] = resources_->rejected(reason);
    }
    j["server"] = {{"connections_open", resources_->open_connections()},
                   {"connections_max", resources_->limits().max_connections},
                   {"connections_accepted", resources_->accepted_connections()},
                   {"buffered_bytes", resources_->budget().used()},
                   {"buffered_bytes_limit", resources_->budget().limit()},
                   {"rejected", rejected}};
  }
  return j.dump() + "\n";
}

// A response waiting for its delay to pass.
class TargetHandler::Delayed final : public net::Deletable {
 public:
  Delayed(TargetHandler* owner, http::Responder responder, int status, std::string body,
          std::string content_type)
      : owner_(owner),
        responder_(std::move(responder)),
        status_(status),
        body_(std::move(body)),
        content_type_(std::move(content_type)),
        timer_(owner->loop_, [this] { Fire(); }) {}
  net::Timer& timer() { return timer_; }

 private:
  void Fire() {
    responder_.Respond(status_, content_type_, body_);
    auto& pending = owner_->delayed_;
    for (size_t i = 0; i < pending.size(); ++i) {
      if (pending[i].get() == this) {
        std::unique_ptr<Delayed> self = std::move(pending[i]);
        pending[i] = std::move(pending.back());
        pending.pop_back();
        owner_->loop_->DeleteLater(std::move(self));
        return;
      }
    }
  }

  TargetHandler* owner_;
  http::Responder responder_;
  int status_;
  std::string body_;
  std::string content_type_;
  net::Timer timer_;
};

TargetHandler::TargetHandler(net::EventLoop* loop, int loop_index, const TargetOptions* options,
                             ReceivedCounts* counts, uint64_t seed)
    : loop_(loop), loop_index_(loop_index), options_(options), counts_(counts), rng_(seed) {}

TargetHandler::~TargetHandler() = default;

void TargetHandler::OnRequest(const http::IncomingRequest& request, http::Responder responder) {
  std::string_view path = request.head.target.substr(0, request.head.target.find('?'));
  if (path != "/_hammer/stats") {
    bool dark = http::FindHeader(request.head.headers, "X-Hammer-Dark").has_value();
    counts_->Record(loop_index_, request.head.method, dark, request.head.major_version == 2);
  }
  Route(request, responder);
}

void TargetHandler::RespondLater(Nanos delay, http::Responder responder, int status,
                                 std::string body, std::string content_type) {
  if (delay <= 0) {
    responder.Respond(status, content_type, body);
    return;
  }
  auto pending = std::make_unique<Delayed>(this, std::move(responder), status, std::move(body),
                                           std::move(content_type));
  pending->timer().ArmAfter(delay);
  delayed_.push_back(std::move(pending));
}

void TargetHandler::Route(const http::IncomingRequest& request, http::Responder& responder) {
  const http::RequestHead& head = request.head;
  std::string_view path = head.target.substr(0, head.target.find('?'));
  std::string_view rest;
  uint64_t n = 0;
  Nanos delay = options_->latency.zero() ? 0 : options_->latency.Sample(rng_);

  if (path == "/_hammer/stats") {
    responder.Respond(200, "application/json", counts_->ToJson());
    return;
  }
  if (options_->error_rate > 0 &&
      std::uniform_real_distribution<double>(0, 1)(rng_) < options_->error_rate) {
    RespondLater(delay, responder, 500, "injected error\n", "text/plain");
    return;
  }
  if (TakeSuffix(path, "/status/", &rest)) {
    if (!ParseNumber(rest, &n) || n < 100 || n > 999) {
      RespondLater(delay, responder, 400, "status must be 100-999\n", "text/plain");
      return;
    }
    int status = static_cast<int>(n);
    std::string body = std::to_string(status) + " " + std::string(http::ReasonPhrase(status));
    RespondLater(delay, responder, status, body + "\n", "text/plain");
    return;
  }
  if (TakeSuffix(path, "/delay/", &rest)) {
    if (!ParseNumber(rest, &n) || n > 3'600'000) {
      RespondLater(delay, responder, 400, "delay must be 0-3600000 ms\n", "text/plain");
      return;
    }
    RespondLater(delay + static_cast<Nanos>(n) * kMillisecond, responder, 200, "ok\n",
                 "text/plain");
    return;
  }
  if (TakeSuffix(path, "/bytes/", &rest)) {
    if (!ParseNumber(rest, &n) || n > kMaxBytesRoute) {
      RespondLater(delay, responder, 400, "bytes must be 0-1073741824\n", "text/plain");
      return;
    }
    if (bytes_.size() < n) bytes_.assign(n, 'x');
    if (delay > 0) {
      RespondLater(delay, responder, 200, bytes_.substr(0, n), "application/octet-stream");
    } else {
      responder.Respond(200, "application/octet-stream", std::string_view(bytes_).substr(0, n));
    }
    return;
  }
  if (path == "/error-content") {
    RespondLater(delay, responder, 200, "something went wrong", "text/plain");
    return;
  }
  if (TakeSuffix(path, "/redirect/", &rest) && ParseNumber(rest, &n) && n > 0) {
    std::string location = n > 1 ? "/redirect/" + std::to_string(n - 1) : "/";
    http::Header h{"Location", location};
    responder.Respond(302, "text/plain", "redirect\n", {&h, 1});
    return;
  }
  if (path == "/redirect-loop") {
    http::Header h{"Location", "/redirect-loop"};
    responder.Respond(302, "text/plain", "redirect\n", {&h, 1});
    return;
  }
  if (path == "/cookie/set") {
    http::Header h{"Set-Cookie", "hammer=1; Path=/"};
    responder.Respond(200, "text/plain", "cookie set\n", {&h, 1});
    return;
  }
  if (path == "/cookie/check") {
    auto cookie = http::FindHeader(head.headers, "Cookie");
    bool ok = cookie && HasCookie(*cookie, "hammer=1");
    RespondLater(delay, responder, ok ? 200 : 401, ok ? "cookie ok\n" : "cookie missing\n",
                 "text/plain");
    return;
  }
  if (path == "/echo") {
    nlohmann::json headers = nlohmann::json::object();
    for (const http::Header& h : head.headers)
      headers[std::string(h.name)] = std::string(h.value);
    nlohmann::json echo = {{"method", std::string(head.method)},
                           {"path", std::string(head.target)},
                           {"headers", headers},
                           {"body", std::string(request.body)}};
    RespondLater(delay, responder, 200,
                 echo.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n",
                 "application/json");
    return;
  }
  if (TakeSuffix(path, "/json/", &rest) && ParseNumber(rest, &n)) {
    bool mutate = options_->mutate_rate > 0 &&
                  std::uniform_real_distribution<double>(0, 1)(rng_) < options_->mutate_rate;
    const std::string& field = options_->mutate_field;
    nlohmann::json item = {{"id", n},
                           {"name", "item " + std::to_string(n)},
                           {"price", n * 100},
                           {"updated_at", MonoNow()}};
    if (mutate && item.contains(field)) {
      item[field] = item[field].is_string() ? nlohmann::json(item[field].get<std::string>() + "!")
                                            : nlohmann::json(item[field].get<uint64_t>() + 1);
    }
    RespondLater(delay, responder, 200, item.dump() + "\n", "application/json");
    return;
  }
  if (path == "/fault/reset-mid-body") {
    std::string partial = "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n";
    partial.append(100, 'x');
    responder.RespondRawThenReset(partial);
    return;
  }
  if (path == "/fault/endless-header") {
    std::string endless = "HTTP/1.1 200 OK\r\nX-Endless: ";
    endless.append(1 << 20, 'a');  // 1 MiB of one header line, then silence
    responder.RespondRaw(endless, /*keep_alive=*/true);
    return;
  }
  if (delay > 0) {
    RespondLater(delay, responder, 200, "ok\n", "text/plain");
  } else {
    responder.Respond(200, "text/plain", "ok\n");
  }
}

}  // namespace hammer::serve
