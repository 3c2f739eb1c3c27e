#include "hammer/load/request_slot.h"

#include <cstdio>
#include <utility>

#include "hammer/http/cookie_jar.h"
#include "hammer/load/redact.h"

namespace hammer::load {

namespace {

bool IsRedirect(int status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

}  // namespace

RequestSlot::RequestSlot(Owner* owner, http::HttpClient* client, const SlotOptions* options)
    : owner_(owner), client_(client), options_(options), matcher_(options->error_pattern) {
  if (options->cookies) jar_ = std::make_unique<http::CookieJar>();
}

RequestSlot::~RequestSlot() = default;

void RequestSlot::Start(const PreparedRequest* request, MonoNanos intended) {
  request_ = request;
  outcome_ = RequestOutcome{};
  outcome_.sent = MonoNow();
  outcome_.intended = intended == 0 ? outcome_.sent : intended;
  visited_.clear();
  logging_ = options_->verbose_left != nullptr &&
             options_->verbose_left->load(std::memory_order_relaxed) > 0 &&
             options_->verbose_left->fetch_sub(1, std::memory_order_relaxed) > 0;
  log_.clear();
  SendHop(*request);
}

void RequestSlot::SendHop(const PreparedRequest& hop) {
  current_ = &hop;
  check_body_ = false;
  location_.clear();
  grpc_.Reset();
  matcher_.Reset();
  outcome_.body_bytes = 0;
  http::ClientRequest request;
  request.origin = hop.origin;
  request.head = hop.head;
  if (jar_) {
    std::string cookies = jar_->CookieHeaderFor(hop.url, WallNowMicros() / 1000000);
    if (!cookies.empty()) {
      // The prepared head ends with the blank line; the Cookie header goes just before it.
      head_with_cookies_.assign(hop.head, 0, hop.head.size() - 2);
      head_with_cookies_.append("Cookie: ").append(cookies).append("\r\n\r\n");
      request.head = head_with_cookies_;
    }
  }
  if (logging_) log_ += RedactHead(request.head, "> ");
  request.body = hop.body;
  request.head_method = hop.method == "HEAD";
  request.idempotent = hop.idempotent;
  request.deadline = MonoNow() + options_->timeout;
  client_->Send(request, this);
}

void RequestSlot::OnResponseHead(const http::ResponseHead& head) {
  outcome_.status = head.status;
  check_body_ = head.status >= 200 && head.status < 400;
  if (jar_ || logging_) {
    for (const http::Header& h : head.headers) {
      if (jar_ && http::EqualsIgnoreCase(h.name, "Set-Cookie")) {
        jar_->SetFromResponse(current_->url, h.value, WallNowMicros() / 1000000);
      }
    }
  }
  if (logging_) {
    log_ += (head.major_version == 2 ? std::string("< HTTP/2 ")
                                     : "< HTTP/1." + std::to_string(head.minor_version) + " ") +
            std::to_string(head.status) + " " + std::string(head.reason) + "\n";
    for (const http::Header& h : head.headers) {
      log_ += "< " + std::string(h.name) + ": " + RedactedValue(h.name, h.value) + "\n";
    }
  }
  if (current_->grpc) grpc_.OnHead(head.headers);
  if (options_->max_redirects > 0 && IsRedirect(head.status)) {
    if (auto location = http::FindHeader(head.headers, "Location")) location_.assign(*location);
  }
}

void RequestSlot::OnResponseBody(std::string_view data) {
  outcome_.body_bytes += data.size();
  if (check_body_) matcher_.Feed(data);
  if (current_->grpc) grpc_.OnBody(data);
}

void RequestSlot::OnResponseTrailers(std::span<const http::Header> trailers) {
  if (logging_) {
    for (const http::Header& h : trailers)
      log_ += "< [trailer] " + std::string(h.name) + ": " + RedactedValue(h.name, h.value) + "\n";
  }
  if (current_->grpc) grpc_.OnTrailers(trailers);
}

void RequestSlot::OnResponseComplete(const http::ExchangeResult& result) {
  if (outcome_.redirects == 0 && result.connect_start != 0) {
    outcome_.connect_time = result.connect_end - result.connect_start;
    if (result.handshake_end != 0)
      outcome_.handshake_time = result.handshake_end - result.connect_end;
  }
  Judge(result, outcome_);
  if (current_->grpc) {
    if (!result.failure) outcome_.grpc_status = grpc_.status();
    // gRPC runs over HTTP/2 only; a server asked in HTTP/1.1 just closes or answers an error.
    if (outcome_.failure && !options_->http2) outcome_.detail += " (gRPC calls need --http2)";
  }
  if (!outcome_.failure && !location_.empty() && FollowRedirect(outcome_)) return;
  outcome_.end = MonoNow();
  if (logging_) {
    log_ += "= " +
            (outcome_.failure ? std::string(FailureName(*outcome_.failure)) + ": " + outcome_.detail
                              : std::string("ok")) +
            ", " + std::to_string((outcome_.end - outcome_.sent) / kMicrosecond) + " us, " +
            std::to_string(outcome_.body_bytes) + " body bytes\n";
    std::fputs(log_.c_str(), stderr);
  }
  owner_->OnRequestDone(this, outcome_);
}

// Sends the next hop of a redirect chain; false when the chain ends here (with or without a
// redirect_loop failure set on `outcome`).
bool RequestSlot::FollowRedirect(RequestOutcome& outcome) {
  if (visited_.empty()) visited_.push_back(request_->url.ToString());
  Result<http::Url> next = http::ResolveLocation(current_->url, location_);
  if (!next.ok()) {
    outcome.failure = Failure::kProtocol;
    outcome.detail = "bad redirect Location '" + location_ + "': " + next.status().message();
    return false;
  }
  std::string next_text = next->ToString();
  for (const std::string& seen : visited_) {
    if (seen == next_text) {
      outcome.failure = Failure::kRedirectLoop;
      outcome.detail = "redirect cycle back to " + next_text;
      return false;
    }
  }
  if (outcome.redirects >= options_->max_redirects) {
    outcome.failure = Failure::kRedirectLoop;
    outcome.detail = "more than " + std::to_string(options_->max_redirects) + " redirects";
    return false;
  }
  visited_.push_back(std::move(next_text));
  ++outcome.redirects;
  // 301/302/303 turn into GET without a body (what browsers and libcurl do); 307/308 repeat.
  bool keep_method = outcome.status == 307 || outcome.status == 308;
  std::string method = keep_method ? current_->method : "GET";
  std::string_view body = keep_method ? current_->body : std::string_view();
  if (method == "HEAD") body = {};
  static const http::HeaderList kNoHeaders;
  std::string body_copy(body);  // the previous hop's storage may be the one being replaced
  hop_.body_storage = std::move(body_copy);
  PrepareRequest(method, *next, options_->headers ? *options_->headers : kNoHeaders,
                 hop_.body_storage, client_, &hop_);
  hop_.key = request_->key;
  hop_.stats = request_->stats;
  hop_.stats_generation = request_->stats_generation;
  SendHop(hop_);
  return true;
}

void RequestSlot::Judge(const http::ExchangeResult& result, RequestOutcome& outcome) const {
  if (result.failure) {
    outcome.failure = result.failure;
    outcome.detail = result.detail;
    return;
  }
  int status = result.status;
  if (status >= 500) {
    outcome.failure = Failure::kHttp5xx;
    outcome.detail = "HTTP " + std::to_string(status);
  } else if (status >= 400) {
    outcome.failure = Failure::kHttp4xx;
    outcome.detail = "HTTP " + std::to_string(status);
  } else if (matcher_.matched()) {
    outcome.failure = Failure::kErrorlikeContent;
    outcome.detail = "body matches --error-pattern";
  } else if (current_->grpc && location_.empty()) {
    if (std::optional<GrpcFailure> failed = grpc_.Judge()) {
      outcome.failure = failed->type;
      outcome.detail = std::move(failed->detail);
    }
  } else if (options_->empty_body_is_error && outcome.body_bytes == 0 && location_.empty()) {
    outcome.failure = Failure::kErrorlikeContent;
    outcome.detail = "empty body";
  }
}

}  // namespace hammer::load
