#include "hammer/dark/primary_exchange.h"

#include <algorithm>
#include <utility>

#include "hammer/dark/capture_writer.h"
#include "hammer/dark/comparison_join.h"
#include "hammer/dark/forwarding.h"
#include "hammer/http/grpc_wire.h"

namespace hammer::dark {

PrimaryExchange::PrimaryExchange(InFlightSet<PrimaryExchange>* owner, ProxyCounters* counters,
                                 const ResponseHolding& holding, http::Responder responder,
                                 bool head_request, bool client_takes_chunked,
                                 std::shared_ptr<ComparisonJoin> join,
                                 std::shared_ptr<http::BodyStream> request_body)
    : owner_(owner),
      counters_(counters),
      holding_(holding),
      responder_(std::move(responder)),
      head_request_(head_request),
      client_takes_chunked_(client_takes_chunked),
      join_(std::move(join)),
      request_stream_(std::move(request_body)),
      start_(MonoNow()),
      response_charge_(holding.budget) {}

PrimaryExchange::~PrimaryExchange() {
  responder_.Watch(nullptr);
  CloseTunnel();
  if (response_stream_ != nullptr) {
    response_stream_->SetProducer(nullptr);
    response_stream_->Fail();  // abandoned mid-body: the client connection closes
  }
}

// 103 Early Hints and other interim answers reach the client as they come, end-to-end fields
// only (100 Continue is the client connection's own business, answered by the server).
void PrimaryExchange::OnResponseInterim(const http::ResponseHead& head) {
  const std::string_view connection = http::FindHeader(head.headers, "Connection").value_or("");
  std::vector<http::Header> fields;
  for (const http::Header& h : head.headers) {
    if (!IsHopByHop(h.name, connection) && !IsProxyAsserted(h.name)) fields.push_back(h);
  }
  responder_.RespondInterim(head.status, fields);
}

void PrimaryExchange::OnResponseHead(const http::ResponseHead& head) {
  status_ = head.status;
  // gRPC's Trailers-Only form puts grpc-status in the head; 14 is UNAVAILABLE.
  grpc_unavailable_ = http::FindHeader(head.headers, "grpc-status") == std::string_view("14");
  if (upgrade_ && head.status == 101) {
    OpenTunnel(head);
    return;
  }
  const std::string_view extra[] = {head.reason};
  headers_.Assign(head.headers, extra);
  if (holding_.stream_threshold == 0 || head_request_ || ResponseHasNoBody(head.status)) return;
  if (head.framing == http::BodyFraming::kContentLength) length_ = head.content_length;
  if (length_ && *length_ > holding_.stream_threshold) {
    StartStreaming(length_);
    return;
  }
  if (!length_ && !client_takes_chunked_) return;  // an HTTP/1.0 client gets it whole
  // A body that is not whole by the end of this loop pass (an event stream, a long poll, a
  // slow upstream) is streamed from what has come: the client never waits for its end.
  holding_.loop->Defer([this, alive = std::weak_ptr<bool>(alive_)] {
    if (!alive.expired() && status_ != 0 && response_stream_ == nullptr && !complete_ &&
        !too_large_)
      SpillIntoStream();
  });
}

// The upstream switched protocols: the client gets the 101, and from then on the bytes of
// each side are the other's (the request stream carries the client's, the response stream
// the upstream's), until one side closes.
void PrimaryExchange::OpenTunnel(const http::ResponseHead& head) {
  tunnel_open_ = true;
  Bump(counters_->tunnels);
  Bump(counters_->tunnels_open);
  response_stream_ = std::make_shared<http::BodyStream>(holding_.loop, std::nullopt,
                                                        holding_.stream_window, holding_.budget);
  response_stream_->SetProducer(this);
  responder_.RespondStream(ForwardSwitchingHead(head.reason, head.headers), response_stream_,
                           /*keep_alive=*/false);
}

void PrimaryExchange::CloseTunnel() {
  if (!tunnel_open_) return;
  tunnel_open_ = false;
  Drop(counters_->tunnels_open);
  if (response_stream_ != nullptr) {
    Bump(counters_->tunnel_bytes_to_client, response_stream_->appended());
  }
  if (request_stream_ != nullptr) {
    Bump(counters_->tunnel_bytes_to_upstream, request_stream_->consumed());
  }
}

// What was kept so far goes first into a stream the rest of the body follows.
void PrimaryExchange::SpillIntoStream() {
  std::string kept = std::move(response_body_);
  response_body_.clear();
  StartStreaming(length_);
  Capture(kept);
  response_stream_->Append(kept);
  if (response_stream_->full()) flow_.Pause();
}

void PrimaryExchange::OnResponseTrailers(std::span<const http::Header> trailers) {
  std::vector<http::Header> kept;
  for (const http::Header& h : trailers) {
    if (ForwardsTrailer(h.name)) kept.push_back(h);
  }
  trailers_.Assign(kept);
}

// The head goes to the client now; the body follows through the stream.
void PrimaryExchange::StartStreaming(std::optional<uint64_t> length) {
  Bump(counters_->streamed_responses);
  response_stream_ = std::make_shared<http::BodyStream>(holding_.loop, length,
                                                        holding_.stream_window, holding_.budget);
  response_stream_->SetProducer(this);
  bool keep_alive = responder_.keeps_alive();
  responder_.RespondStream(ForwardResponseHead(status_, headers_.Extra(0), headers_.headers(),
                                               length, head_request_, keep_alive),
                           response_stream_, keep_alive);
}

void PrimaryExchange::Capture(std::string_view data) {
  if (!join_) return;
  size_t room = holding_.compare_capture_bytes -
                std::min(holding_.compare_capture_bytes, response_body_.size());
  response_body_.append(data.substr(0, room));
  response_charge_.Set(response_body_.capacity());
}

void PrimaryExchange::OnResponseBody(std::string_view data) {
  if (response_stream_ != nullptr) {
    Capture(data);
    response_stream_->Append(data);
    if (response_stream_->full()) flow_.Pause();  // OnBodyStreamDrained resumes
    return;
  }
  if (holding_.stream_threshold != 0 && client_takes_chunked_ &&
      response_body_.size() + data.size() > holding_.stream_threshold) {
    SpillIntoStream();  // a body of unknown length grew past the threshold
    OnResponseBody(data);
    return;
  }
  if (response_body_.size() + data.size() > holding_.max_response_bytes) {
    too_large_ = true;
    return;
  }
  response_body_.append(data);
  response_charge_.Set(response_body_.capacity());
}

// The response stream has room again, or the client went away (cancelled).
void PrimaryExchange::OnBodyStreamDrained() {
  if (response_stream_ == nullptr) return;
  if (!response_stream_->cancelled()) {
    flow_.Resume();
    return;
  }
  if (tunnel_open_) {
    CloseTunnel();  // the client closed the tunnel
  } else {
    Bump(counters_->client_aborted);
  }
  flow_.Abort();  // the upstream sees the request aborted; no completion follows
  if (observer_ != nullptr) observer_->TryAbandoned(*this);
  response_stream_->SetProducer(nullptr);
  response_stream_.reset();
  if (join_) join_->PrimaryFailed();
  SubmitCapture(0);
  owner_->Finish(this);  // last: destroyed after this loop iteration
}

// The client gave up before any answer began (called from inside the server: the responder is
// not used).
void PrimaryExchange::OnRequestAbandoned() {
  Bump(counters_->client_aborted);
  flow_.Abort();  // the upstream sees the request aborted; no completion follows
  if (observer_ != nullptr) observer_->TryAbandoned(*this);
  if (join_) join_->PrimaryFailed();
  SubmitCapture(0);
  owner_->Finish(this);  // destroyed after this loop iteration
}

// Whether the request may go to another instance: nothing of the answer has reached the
// client, the request body is held whole (a streamed one is consumed), and the request either
// never reached the upstream (no connection, or a connection reset before any byte was
// written) or is idempotent and got no answer head.
bool PrimaryExchange::Retryable(const http::ExchangeResult& result) const {
  if (response_stream_ != nullptr) return false;
  if (!result.failure) {
    // gRPC's Trailers-Only UNAVAILABLE: the call was not processed. Its request body was
    // streamed (every gRPC request is) and is sent again from the copy kept of it.
    return grpc_unavailable_ && response_body_.empty() && !too_large_ &&
           (request_stream_ == nullptr || request_stream_->consumed_copy() != nullptr);
  }
  if (request_stream_ != nullptr) return false;
  Failure failure = *result.failure;
  bool never_sent = failure == Failure::kConnect ||
                    (failure == Failure::kReset && result.bytes_sent == 0 && status_ == 0);
  bool repeatable =
      idempotent_ && status_ == 0 && (failure == Failure::kReset || failure == Failure::kTimeout);
  return never_sent || repeatable;
}

// What the last try left behind, before the next one; a streamed request body that was kept
// (BodyStream::KeepConsumed) is sent again from its copy.
void PrimaryExchange::ForgetTry() {
  if (request_stream_ != nullptr) {
    const http::BodyStream& sent = *request_stream_;
    auto again = std::make_shared<http::BodyStream>(holding_.loop, sent.length(),
                                                    holding_.stream_window, holding_.budget);
    again->KeepConsumed(sent.consumed_copy()->size());
    again->Append(*sent.consumed_copy());
    again->SetTrailers(sent.trailers());
    again->End();
    request_stream_ = std::move(again);
  }
  status_ = 0;
  grpc_unavailable_ = false;
  length_.reset();
  too_large_ = false;
  complete_ = false;
  response_body_.clear();
  response_charge_.Set(0);
  trailers_ = http::OwnedHeaders();
}

void PrimaryExchange::OnResponseComplete(const http::ExchangeResult& result) {
  if (tunnel_open_) {
    // Either side closed: the end of a tunnel, whichever it was, is no failure of the
    // upstream instance. The client's connection closes once what the upstream sent is out.
    CloseTunnel();
    if (observer_ != nullptr) observer_->TryAbandoned(*this);
    if (response_stream_ != nullptr) {
      response_stream_->End();
      response_stream_->SetProducer(nullptr);
      response_stream_.reset();
    }
    Bump(counters_->responses);
    owner_->Finish(this);
    return;
  }
  if (observer_ != nullptr) {
    const bool client_gone = response_stream_ != nullptr && response_stream_->cancelled();
    bool retryable = !client_gone && Retryable(result);
    if (retryable) ForgetTry();  // the observer may send the next try at once
    if (observer_->TryEnded(*this, result, retryable)) return;
  }
  complete_ = true;
  // Trailers go after a body, so an answer that has them is sent as a stream (chunked to an
  // HTTP/1.1 client, a last HEADERS frame to an HTTP/2 one).
  if (!result.failure && !too_large_ && response_stream_ == nullptr &&
      !trailers_.headers().empty() && !head_request_ && client_takes_chunked_ &&
      !ResponseHasNoBody(status_)) {
    length_.reset();
    SpillIntoStream();
  }
  const bool client_left = (request_stream_ != nullptr && request_stream_->failed()) ||
                           (response_stream_ != nullptr && response_stream_->cancelled());
  int answered = client_left ? 0 : status_;  // the status the client got, for --capture
  if (client_left) {
    Bump(counters_->client_aborted);  // nobody to answer
    if (join_) join_->PrimaryFailed();
  } else if (response_stream_ != nullptr) {
    if (result.failure) {
      // The client has the head already: closing its connection is all that can be said.
      Bump(counters_->upstream_failed[static_cast<size_t>(*result.failure)]);
      Bump(counters_->upstream_aborted);
      response_stream_->Fail();
      if (join_) join_->PrimaryFailed();
    } else {
      response_stream_->SetTrailers(trailers_.headers());
      response_stream_->End();
      if (join_) {
        join_->SetPrimary(status_, headers_.headers(), response_body_,
                          (result.end - start_) / kMicrosecond, trailers_.headers());
      }
    }
  } else if (result.failure || too_large_) {
    Failure failure = result.failure ? *result.failure : Failure::kProtocol;
    Bump(counters_->upstream_failed[static_cast<size_t>(failure)]);
    const std::string failed =
        "upstream " + std::string(FailureName(failure)) +
        (too_large_ ? ": response larger than the limit" : ": " + result.detail);
    const std::string why =
        no_instance_available
            ? "hammer dark: no regular instance is available (every one is ejected or failing "
              "its health checks); the last try failed: " +
                  failed
            : "hammer dark: " + failed;
    const bool timeout = failure == Failure::kTimeout && !no_instance_available;
    if (grpc_) {
      const std::string message = http::PercentEncodeGrpcMessage(why);
      const http::Header status[] = {{"grpc-status", timeout ? "4" : "14"},
                                     {"grpc-message", message}};
      answered = 200;
      responder_.Respond(answered, "application/grpc", "", status);
    } else {
      answered = no_instance_available ? 503 : timeout ? 504 : 502;
      responder_.Respond(answered, "text/plain", why + "\n");
    }
    if (join_) join_->PrimaryFailed();
  } else {
    bool keep_alive = responder_.keeps_alive();
    responder_.RespondRaw(ForwardResponse(status_, headers_.Extra(0), headers_.headers(),
                                          response_body_, head_request_, keep_alive),
                          keep_alive);
    if (join_) {
      join_->SetPrimary(status_, headers_.headers(), response_body_,
                        (result.end - start_) / kMicrosecond, trailers_.headers());
    }
  }
  if (response_stream_ != nullptr) {
    response_stream_->SetProducer(nullptr);
    response_stream_.reset();
  }
  if (!client_left) Bump(counters_->responses);
  SubmitCapture(answered);
  owner_->Finish(this);  // last: destroyed after this loop iteration
}

// After the answer: nothing here delays the client.
void PrimaryExchange::SubmitCapture(int status) {
  if (capture_ == nullptr) return;
  CapturedExchange& captured = *capture_;
  captured.status = status;
  captured.latency_us = (MonoNow() - start_) / kMicrosecond;
  captured.head = std::move(head_);
  const size_t limit = capture_writer_->body_limit();
  if (request_stream_ != nullptr) {
    captured.body_size = request_stream_->appended();
    const std::string* kept = request_stream_->consumed_copy();
    if (kept != nullptr && kept->size() <= limit) {
      captured.body = *kept;
    } else {
      captured.body_truncated = captured.body_size > 0;
    }
  } else {
    captured.body_size = body_.size();
    if (body_.size() <= limit) {
      captured.body = std::move(body_);
    } else {
      captured.body.assign(body_, 0, limit);
      captured.body_truncated = true;
    }
  }
  capture_writer_->Submit(std::move(capture_));
}

}  // namespace hammer::dark
