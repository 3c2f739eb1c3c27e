#include "hammer/http/body_stream.h"

#include <algorithm>
#include <charconv>
#include <utility>
#include <vector>

namespace hammer::http {

BodyStream::BodyStream(net::EventLoop* loop, std::optional<uint64_t> length, size_t window,
                       BufferBudget* budget)
    : loop_(loop), length_(length), window_(window), charge_(budget) {}

void BodyStream::KeepConsumed(size_t limit) {
  keep_limit_ = limit;
}

void BodyStream::Consume(size_t bytes) {
  bytes = std::min(bytes, data_.size() - start_);
  if (keep_limit_ > 0 && !kept_overflowed_) {
    if (kept_.size() + bytes > keep_limit_) {
      kept_overflowed_ = true;
      std::string().swap(kept_);
    } else {
      kept_.append(data_, start_, bytes);
    }
    charge_.Set(data_.capacity() + kept_.capacity());
  }
  start_ += bytes;
  consumed_ += bytes;
  if (start_ == data_.size()) {
    data_.clear();
    start_ = 0;
  }
  if (producer_blocked_ && !full()) {
    producer_blocked_ = false;
    WakeProducer();
  }
}

bool BodyStream::SetTap(Tap* tap) {
  if (tap == nullptr) {
    tap_ = nullptr;
    return true;
  }
  if (consumed_ > 0 || failed_ || cancelled_) return false;
  if (!available().empty()) tap->OnTapped(available());
  if (ended_) {
    tap->OnTapEnded(true);
  } else {
    tap_ = tap;
  }
  return true;
}

void BodyStream::Append(std::string_view data) {
  if (ended_ || failed_ || cancelled_ || data.empty()) return;
  // Reuse the room of what was consumed rather than grow.
  if (start_ > 0 && data_.size() + data.size() > data_.capacity()) {
    data_.erase(0, start_);
    start_ = 0;
  }
  data_.append(data);
  appended_ += data.size();
  if (tap_ != nullptr) tap_->OnTapped(data);
  charge_.Set(data_.capacity() + kept_.capacity());
  if (full()) producer_blocked_ = true;
  WakeConsumer();
}

void BodyStream::End() {
  if (ended_ || failed_ || cancelled_) return;
  ended_ = true;
  if (tap_ != nullptr) std::exchange(tap_, nullptr)->OnTapEnded(true);
  WakeConsumer();
}

void BodyStream::Fail() {
  if (ended_ || failed_ || cancelled_) return;
  failed_ = true;
  if (tap_ != nullptr) std::exchange(tap_, nullptr)->OnTapEnded(false);
  Drop();
  WakeConsumer();
}

void BodyStream::Cancel() {
  if (failed_ || cancelled_) return;
  cancelled_ = true;
  if (tap_ != nullptr) std::exchange(tap_, nullptr)->OnTapEnded(false);
  Drop();
  WakeProducer();
}

void BodyStream::Drop() {
  std::string().swap(data_);
  start_ = 0;
  std::string().swap(kept_);
  kept_overflowed_ = true;
  charge_.Set(0);
}

void BodyStream::WakeConsumer() {
  if (consumer_wake_pending_) return;
  consumer_wake_pending_ = true;
  loop_->Defer([self = weak_from_this()] {
    std::shared_ptr<BodyStream> stream = self.lock();
    if (!stream) return;
    stream->consumer_wake_pending_ = false;
    if (stream->consumer_ != nullptr) stream->consumer_->OnBodyStreamReady();
  });
}

void BodyStream::WakeProducer() {
  if (producer_wake_pending_) return;
  producer_wake_pending_ = true;
  loop_->Defer([self = weak_from_this()] {
    std::shared_ptr<BodyStream> stream = self.lock();
    if (!stream) return;
    stream->producer_wake_pending_ = false;
    if (stream->producer_ != nullptr) stream->producer_->OnBodyStreamDrained();
  });
}

void AppendChunk(std::string& out, std::string_view data) {
  if (data.empty()) return;
  char size[20];
  char* end = std::to_chars(size, size + sizeof(size), data.size(), 16).ptr;
  out.append(size, end).append("\r\n").append(data).append("\r\n");
}

void BodyStream::SetTrailers(std::span<const Header> trailers) {
  if (trailer_filter_ == nullptr) {
    trailers_.Assign(trailers);
    return;
  }
  std::vector<Header> kept;
  for (const Header& h : trailers) {
    if (trailer_filter_(h.name)) kept.push_back(h);
  }
  trailers_.Assign(kept);
}

void AppendLastChunk(std::string& out, std::span<const Header> trailers) {
  out.append("0\r\n");
  for (const Header& h : trailers)
    out.append(h.name).append(": ").append(h.value).append("\r\n");
  out.append("\r\n");
}

}  // namespace hammer::http
