// TappedRequest: a request whose body streams to the regular upstream (a gRPC call: its
// messages go as they arrive) and is copied for the dark clusters as it flows
// (http::BodyStream::Tap), never holding it up. Once the body has ended, whole and within
// max_body_bytes, the handler is told (Ready, from the loop, never from inside the stream) and
// sends the planned copies from head() and body(); otherwise it is told that the copy cannot
// be made (Ready with whole false: the client gave up, the body was over the limit, or the
// upstream stopped taking it).
//
// Ownership: the handler's InFlightSet; it detaches from the stream when destroyed, so a
// request that outlives it is not touched. Threading: the handler's loop only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hammer/dark/in_flight_set.h"
#include "hammer/http/body_stream.h"
#include "hammer/http/owned_headers.h"
#include "hammer/http/server.h"
#include "hammer/net/event_loop.h"

namespace hammer::dark {

class ComparisonJoin;
class DarkCluster;

class TappedRequest final : public http::BodyStream::Tap, public net::Deletable {
 public:
  // Copies to send to one cluster once the body is whole.
  struct Planned {
    DarkCluster* cluster;
    uint32_t copies;
  };
  // Called once, from the loop: `whole` when head() and body() can be copied.
  using Ready = std::function<void(TappedRequest& request, bool whole)>;

  // Keeps a copy of `request`'s head (with `target` as its target) and client address.
  TappedRequest(InFlightSet<TappedRequest>* owner, net::EventLoop* loop,
                const http::IncomingRequest& request, std::string_view target,
                std::shared_ptr<ComparisonJoin> join, std::vector<Planned> planned,
                size_t max_body_bytes, Ready ready);
  ~TappedRequest() override;
  TappedRequest(const TappedRequest&) = delete;
  TappedRequest& operator=(const TappedRequest&) = delete;

  // Starts copying `stream` (false: it cannot be tapped any more; nothing happens then).
  bool Attach(std::shared_ptr<http::BodyStream> stream);

  const http::RequestHead& head() const { return head_; }
  std::string_view body() const { return body_; }
  std::string_view client_ip() const { return client_ip_; }
  const std::shared_ptr<ComparisonJoin>& join() const { return join_; }
  const std::vector<Planned>& planned() const { return planned_; }
  bool over_limit() const { return over_limit_; }

  // Done with it: destroyed after this loop iteration.
  void Finish() { owner_->Finish(this); }

 private:
  void OnTapped(std::string_view data) override;
  void OnTapEnded(bool whole) override;

  InFlightSet<TappedRequest>* owner_;
  net::EventLoop* loop_;
  http::OwnedHeaders kept_;  // the head's fields, method and target
  http::RequestHead head_;   // views into kept_
  std::string client_ip_;
  std::shared_ptr<ComparisonJoin> join_;
  std::vector<Planned> planned_;
  size_t max_body_bytes_;
  Ready ready_;
  std::shared_ptr<http::BodyStream> stream_;
  std::string body_;
  bool over_limit_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace hammer::dark
