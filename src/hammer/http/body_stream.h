// BodyStream: a message body that passes through without ever being held whole. A producer
// appends pieces as they arrive; a consumer takes them as its socket accepts them. At most
// about `window` bytes wait in between: the producer stops reading its source while the stream
// is full(), so a slow consumer slows the producer's peer through TCP, and memory stays near
// the window whatever the body's size (one piece may overshoot it: a producer appends what
// one read brought).
//
// The dark proxy uses one per direction of a streamed exchange: a request body (producer: the
// server connection's codec reading it from the client; consumer: the ClientConnection sending
// it upstream) and a response body (producer: whoever receives it from the HttpClient;
// consumer: the server connection's codec writing it to the client).
//
// Wake-ups are deferred (EventLoop::Defer), never made from inside a call, so neither side
// can re-enter the other: Append, End and Fail schedule Consumer::OnBodyStreamReady; a Consume
// that frees room for a producer that found the stream full, and Cancel, schedule
// Producer::OnBodyStreamDrained.
//
// Errors: either side may give up. Fail() is the producer's (its source went away or broke:
// nothing more comes, and whatever carries the body cannot be completed); Cancel() is the
// consumer's (its destination went away: nothing more is taken, and the producer should stop
// its source). Both drop the waiting bytes. After either, Append does nothing.
//
// Ownership: shared (std::shared_ptr) by the producer side and the consumer side. Each side
// registers itself (SetProducer/SetConsumer) and must detach (set nullptr) before it is
// destroyed. The bytes waiting (the buffer's capacity) are charged to a BufferBudget when one
// is given. Threading: one event loop's thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "hammer/http/buffer_budget.h"
#include "hammer/http/owned_headers.h"
#include "hammer/net/event_loop.h"

namespace hammer::http {

class BodyStream : public std::enable_shared_from_this<BodyStream> {
 public:
  class Consumer {
   public:
    virtual ~Consumer() = default;
    // More bytes are available, or the body ended or failed.
    virtual void OnBodyStreamReady() = 0;
  };
  class Producer {
   public:
    virtual ~Producer() = default;
    // The stream was full and has room again, or the consumer cancelled it.
    virtual void OnBodyStreamDrained() = 0;
  };
  // Sees a copy of the body as it passes, without holding it up (the dark proxy copies a
  // request to its dark clusters this way): each piece as it is appended, then once how the
  // body ended: whole (End), or not (Fail, or Cancel before End). Called from inside Append,
  // End, Fail and Cancel: a tap must not call the stream.
  class Tap {
   public:
    virtual ~Tap() = default;
    virtual void OnTapped(std::string_view data) = 0;
    virtual void OnTapEnded(bool whole) = 0;
  };

  // `length`: the body's size when the producer knows it (Content-Length), else unknown (the
  // consumer frames it, e.g. chunked). `budget` may be null.
  BodyStream(net::EventLoop* loop, std::optional<uint64_t> length, size_t window,
             BufferBudget* budget);
  BodyStream(const BodyStream&) = delete;
  BodyStream& operator=(const BodyStream&) = delete;

  // --- Consumer side.
  // The bytes waiting; valid until the next call on the stream.
  std::string_view available() const { return std::string_view(data_).substr(start_); }
  // `bytes` of available() have been passed on; frees their room.
  void Consume(size_t bytes);
  // Every byte has been appended (End) and consumed.
  bool finished() const { return ended_ && start_ == data_.size(); }
  // Trailer fields to send after the body (gRPC's grpc-status, an HTTP/1.1 chunked trailer);
  // complete once ended(). An HTTP/1.1 consumer of a body with a known length cannot send
  // them and drops them.
  std::span<const Header> trailers() const { return trailers_.headers(); }
  // The producer gave up: nothing more comes.
  bool failed() const { return failed_; }
  // The consumer gave up: nothing more is taken.
  bool cancelled() const { return cancelled_; }
  // Trailer fields whose name `keep` refuses are dropped when the producer sets them: what
  // the consumer's side allows to pass on (a proxy's rules), whoever produces the body.
  void FilterTrailers(bool (*keep)(std::string_view name)) { trailer_filter_ = keep; }
  void Cancel();
  void SetConsumer(Consumer* consumer) { consumer_ = consumer; }
  // Keeps a copy of the bytes consumed from now on, `limit` bytes at most (charged to the
  // budget like the waiting bytes), so that a body already passed on can be sent once more (a
  // proxy's retry); a body larger than that is not kept at all.
  void KeepConsumed(size_t limit);
  // The whole body, once it has all been consumed (finished()) within KeepConsumed's limit;
  // null otherwise.
  const std::string* consumed_copy() const {
    return keep_limit_ > 0 && !kept_overflowed_ && finished() ? &kept_ : nullptr;
  }

  // --- Producer side.
  void Append(std::string_view data);
  // Before End: the fields that follow the body (copied), less those FilterTrailers refuses.
  void SetTrailers(std::span<const Header> trailers);
  void End();
  void Fail();
  // At or over the window: the producer stops until OnBodyStreamDrained.
  bool full() const { return data_.size() - start_ >= window_; }
  bool ended() const { return ended_; }
  void SetProducer(Producer* producer) { producer_ = producer; }
  // One tap at a time; detach (nullptr) before it is destroyed. A tap set once bytes were
  // appended is handed what waits at once (and the end, if the body has ended); a stream that
  // was already partly consumed, failed or cancelled cannot be tapped (false).
  bool SetTap(Tap* tap);

  std::optional<uint64_t> length() const { return length_; }
  uint64_t appended() const { return appended_; }
  uint64_t consumed() const { return consumed_; }
  size_t charged() const { return charge_.charged(); }

 private:
  void Drop();
  void WakeConsumer();
  void WakeProducer();

  net::EventLoop* loop_;
  std::optional<uint64_t> length_;
  size_t window_;
  std::string data_;       // waiting bytes are data_[start_, size)
  size_t keep_limit_ = 0;  // KeepConsumed
  std::string kept_;
  bool kept_overflowed_ = false;
  size_t start_ = 0;
  uint64_t appended_ = 0;
  uint64_t consumed_ = 0;
  bool ended_ = false;
  bool failed_ = false;
  bool cancelled_ = false;
  bool producer_blocked_ = false;  // an Append filled it: wake the producer when room frees
  bool consumer_wake_pending_ = false;
  bool producer_wake_pending_ = false;
  Consumer* consumer_ = nullptr;
  Producer* producer_ = nullptr;
  Tap* tap_ = nullptr;
  OwnedHeaders trailers_;
  bool (*trailer_filter_)(std::string_view name) = nullptr;
  BufferCharge charge_;
};

// Appends `data` to `out` as one chunk of the chunked transfer coding (RFC 9112 §7.1):
// the size in hex, CRLF, the data, CRLF. Empty data appends nothing (a zero-size chunk would
// end the body: kLastChunk does that).
void AppendChunk(std::string& out, std::string_view data);
inline constexpr std::string_view kLastChunk = "0\r\n\r\n";
// The last chunk with `trailers` as its trailer section (RFC 9112 §7.1.2): kLastChunk when
// there are none.
void AppendLastChunk(std::string& out, std::span<const Header> trailers);

}  // namespace hammer::http
