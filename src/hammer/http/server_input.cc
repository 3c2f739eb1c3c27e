// ServerConnection's reading (server_connection.h): how much is read per readiness event and
// into which buffer, back-pressure (reading paused while the input or a streamed request body
// is full), the reads the loop defers because no event will announce their input, and the
// drain of a refused client's input. Kept apart from server_connection.cc, which holds the
// parsing state machine and the output buffer, and from server_answers.cc.
#include <sys/epoll.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "hammer/http/server_connection.h"

namespace hammer::http {

namespace {

// The first size of a connection's own input buffer; it doubles up to its cap as needed.
constexpr size_t kOwnBufferStart = 16 * 1024;
// Reads per readiness event before the connection yields to the others on its loop (1 MiB of
// plain TCP, 256 KiB of TLS records).
constexpr int kReadsPerEvent = 16;

}  // namespace

void ServerConnection::OnReadable(bool peer_closing) {
  bool again = true;
  for (int reads = 0; again; ++reads) {
    if (phase_ != Phase::kHead && phase_ != Phase::kBody && phase_ != Phase::kStreamingBody &&
        phase_ != Phase::kServing) {
      return;
    }
    if (reading_paused_) return;
    if (reads == kReadsPerEvent) {
      ReadLater();  // yield to the other connections of this loop
      return;
    }
    again = false;
    if (in_end_ == in_start_ && phase_ != Phase::kServing) {
      ReadIntoSharedBuffer(peer_closing, &again);
    } else {
      ReadIntoOwnBuffer(peer_closing, &again);
    }
  }
}

// Nothing is buffered: read into the loop's shared buffer, parse at once, keep only the rest.
void ServerConnection::ReadIntoSharedBuffer(bool peer_closing, bool* again) {
  std::string& buffer = listener_->read_buffer_;
  net::IoResult r = transport_->Read(buffer.data(), buffer.size());
  if (r.kind != net::IoResult::Kind::kOk) {
    if (r.kind == net::IoResult::Kind::kEof && tunnel_ && phase_ == Phase::kStreamingBody) {
      EndTunnelInput();  // half-closed: the other direction goes on
      return;
    }
    // EOF or an error: the client is gone (or half-closed); nothing more can be answered.
    if (r.kind == net::IoResult::Kind::kEof || r.kind == net::IoResult::Kind::kError) Close();
    return;
  }
  if (phase_ == Phase::kBody || phase_ == Phase::kStreamingBody) {
    timer_.ArmAfter(StreamIdleTimeout());
  }
  std::string_view input(buffer.data(), r.bytes);
  size_t used = ParseAndDispatch(input);
  if (phase_ == Phase::kClosed) return;
  KeepUnparsed(input.substr(used));
  // A short read drained the socket; the next edge brings whatever comes next (a close already
  // announced by this event would not come again: read on until EOF then).
  *again = r.bytes == buffer.size() || peer_closing || !transport_->short_read_drains();
}

void ServerConnection::ReadIntoOwnBuffer(bool peer_closing, bool* again) {
  if (in_start_ == in_end_) in_start_ = in_end_ = 0;
  if (in_end_ == in_.size() && in_start_ > 0) {
    std::memmove(in_.data(), in_.data() + in_start_, in_end_ - in_start_);
    in_end_ -= in_start_;
    in_start_ = 0;
  }
  if (in_end_ == in_.size() && in_.size() < input_cap_) {
    in_.resize(std::min(input_cap_, std::max(kOwnBufferStart, in_.size() * 2)));
  }
  const size_t room = in_.size() - in_end_;
  if (room == 0) {
    // Full: what the client sends now waits in its TCP window until the buffer drains.
    PauseReading();
    return;
  }
  net::IoResult r = transport_->Read(in_.data() + in_end_, room);
  if (r.kind != net::IoResult::Kind::kOk) {
    if (r.kind == net::IoResult::Kind::kEof && tunnel_ && phase_ == Phase::kStreamingBody &&
        in_start_ == in_end_) {
      EndTunnelInput();
      return;
    }
    if (r.kind == net::IoResult::Kind::kEof || r.kind == net::IoResult::Kind::kError) Close();
    return;
  }
  in_end_ += r.bytes;
  if (phase_ == Phase::kBody || phase_ == Phase::kStreamingBody) {
    timer_.ArmAfter(StreamIdleTimeout());
  }
  if (phase_ != Phase::kServing) ServeBuffered();
  *again = r.bytes == room || peer_closing || !transport_->short_read_drains();
}

// Bytes of the shared buffer that are not parsed yet (a partial head, pipelined requests)
// move into the connection's own buffer, which was empty.
void ServerConnection::KeepUnparsed(std::string_view rest) {
  if (phase_ == Phase::kClosing || phase_ == Phase::kLingering) return;  // never parsed
  if (!rest.empty()) {
    if (in_.size() < rest.size()) in_.resize(std::max(kOwnBufferStart, rest.size()));
    std::memcpy(in_.data(), rest.data(), rest.size());
    in_start_ = 0;
    in_end_ = rest.size();
  }
  if (phase_ == Phase::kHead && head_clock_.head_started == 0 &&
      (in_end_ > in_start_ || parser_.started())) {
    OnHeadBytes();
  }
}

// Changes what epoll reports for the socket. Re-arming input makes epoll report what arrived
// while it was not watched. Fails only without kernel memory: the connection is closed.
void ServerConnection::Watch(uint32_t events) {
  if (!loop_->Modify(transport_->fd(), events, this).ok()) Close();
}

void ServerConnection::PauseReading() {
  if (reading_paused_) return;
  reading_paused_ = true;
  Watch(kWatchOutputOnly);
}

void ServerConnection::ResumeReadingIfRoom() {
  if (!reading_paused_ || in_end_ - in_start_ >= input_cap_) return;
  if (phase_ != Phase::kHead && phase_ != Phase::kBody && phase_ != Phase::kStreamingBody &&
      phase_ != Phase::kServing) {
    return;
  }
  if (phase_ == Phase::kStreamingBody && RequestStreamFull()) return;
  reading_paused_ = false;
  // Re-arming makes epoll report input that arrived in the socket while it was not watched;
  // input the transport took off the socket before the pause (TLS) raises no event.
  Watch(kWatchInput);
  if (phase_ != Phase::kClosed && transport_->holds_input()) ReadLater();
}

// What is left to read may never raise an event: the socket's edge was consumed by the read
// that stopped at the budget, and TLS may hold records already taken off the socket. So the
// next read comes from the loop itself, after the other connections' events of this
// iteration; reading until kWantRead (as if the peer were closing) leaves nothing behind.
void ServerConnection::ReadLater() {
  if (read_later_) return;  // one deferred read at a time
  read_later_ = true;
  loop_->Defer([this, alive = std::weak_ptr<bool>(alive_)] {
    if (alive.expired()) return;
    read_later_ = false;
    if (phase_ == Phase::kLingering) {
      DrainLingering();
    } else {
      OnReadable(/*peer_closing=*/true);
    }
    if (phase_ != Phase::kClosed) UpdateCharge();
  });
}

void ServerConnection::DrainLingering() {
  std::string& scratch = listener_->read_buffer_;
  for (int reads = 0; reads < kReadsPerEvent; ++reads) {
    net::IoResult r = transport_->Read(scratch.data(), scratch.size());
    if (r.kind == net::IoResult::Kind::kWantRead) return;
    if (r.kind != net::IoResult::Kind::kOk) {
      Close();
      return;
    }
  }
  ReadLater();  // yield to the other connections of this loop
}

void ServerConnection::EndTunnelInput() {
  request_stream_->End();
  request_stream_->SetProducer(nullptr);
  request_stream_.reset();
  phase_ = Phase::kServing;  // the answer's stream still goes to the client
  PauseReading();
}

}  // namespace hammer::http
