// EvictingRingBuffer<T>: the constant-qps strategy's store of recent requests (rest.li's
// EvictingCircularBuffer in github.com/linkedin/rest.li r2-core), with time passed in.
//
//  * Put never fails and never blocks: once `capacity` entries are held, it overwrites the
//    oldest one (inbound faster than the dispatch rate means sampling).
//  * Get hands out entries round-robin from a reader cursor that is independent of the
//    writer, so when reads outpace writes it hands out the same entries again (re-sending).
//    It skips and frees entries older than the TTL (an entry put at p is expired at `now`
//    when now - p > ttl) and returns null once every entry has expired.
//  * The sequence of entries returned is exactly rest.li's for the same calls: with capacity
//    5, put(a); get→a; get→a; put(b); get→b; get→a; get→b.
//
// Entries are kept in put order around the ring, so the unexpired ones always form one arc
// ending at the newest entry; Get therefore costs O(1) amortized instead of rest.li's scan of
// the whole ring (a capacity of 10^6 with a handful of entries would otherwise scan 10^6 slots
// per dispatch). Slots are allocated as they are first written, not up front.
//
// Times must not go backwards between calls. Capacity and TTL below 1 are rejected (Create
// returns an error), as rest.li does. Not thread-safe: one per dark cluster and event loop.
#pragma once

#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "hammer/base/clock.h"
#include "hammer/base/status.h"

namespace hammer::dark {

template <typename T>
class EvictingRingBuffer {
 public:
  static Status Validate(size_t capacity, Nanos ttl) {
    if (capacity < 1) return Status::Error("ring buffer capacity must be at least 1");
    if (ttl < 1) return Status::Error("ring buffer TTL must be at least 1 ns");
    return Status::Ok();
  }
  static Result<EvictingRingBuffer> Create(size_t capacity, Nanos ttl) {
    Status status = Validate(capacity, ttl);
    if (!status.ok()) return status;
    return EvictingRingBuffer(capacity, ttl);
  }

  // Stores `value`, overwriting the oldest entry when full.
  void Put(T value, MonoNanos now) {
    if (writer_ == slots_.size()) {
      slots_.push_back(Slot{std::move(value), now});
    } else {
      slots_[writer_] = Slot{std::move(value), now};
    }
    writer_ = (writer_ + 1) % capacity_;
    if (live_ < capacity_) ++live_;
  }

  // The next unexpired entry after the reader cursor, or null when every entry has expired.
  // The pointer stays valid until the next Put, Clear, SetCapacity or destruction.
  const T* Get(MonoNanos now) {
    EvictExpired(now);
    if (live_ == 0) {
      // rest.li's fruitless scan visits capacity + 1 slots, leaving its reader one further on;
      // kept so that the sequence of entries returned stays identical.
      reader_ = (reader_ + 1) % capacity_;
      return nullptr;
    }
    size_t oldest = Oldest();
    // The reader takes the next slot in ring order that lies in the live arc: its own slot if
    // that is live, otherwise the arc's first (every slot in between is empty or expired).
    size_t offset = (reader_ + capacity_ - oldest) % capacity_;
    size_t position = offset < live_ ? reader_ : oldest;
    reader_ = (position + 1) % capacity_;
    return &*slots_[position].value;
  }

  // Drops every entry and rewinds both cursors (rest.li's clear(), done on refresh).
  void Clear() {
    slots_.clear();
    reader_ = writer_ = live_ = 0;
  }

  // Changes the capacity, dropping every entry (as rest.li's setCapacity). Rejects < 1.
  Status SetCapacity(size_t capacity) {
    Status status = Validate(capacity, ttl_);
    if (!status.ok()) return status;
    Clear();
    slots_.shrink_to_fit();
    capacity_ = capacity;
    return status;
  }

  // Changes the TTL, keeping the entries (as rest.li's setTtl). Rejects < 1.
  Status SetTtl(Nanos ttl) {
    Status status = Validate(capacity_, ttl);
    if (status.ok()) ttl_ = ttl;
    return status;
  }

  size_t capacity() const { return capacity_; }
  Nanos ttl() const { return ttl_; }
  // Entries held, including expired ones no Get has freed yet.
  size_t size() const { return live_; }
  bool empty() const { return live_ == 0; }

 private:
  struct Slot {
    std::optional<T> value;
    MonoNanos put_time = 0;
  };

  EvictingRingBuffer(size_t capacity, Nanos ttl) : capacity_(capacity), ttl_(ttl) {}

  size_t Oldest() const { return (writer_ + capacity_ - live_) % capacity_; }

  void EvictExpired(MonoNanos now) {
    while (live_ > 0) {
      Slot& oldest = slots_[Oldest()];
      if (now - oldest.put_time <= ttl_) break;
      oldest.value.reset();  // free the request now, not when the slot is overwritten
      --live_;
    }
  }

  std::vector<Slot> slots_;  // grows to capacity_ as slots are first written
  size_t capacity_;
  Nanos ttl_;
  size_t reader_ = 0;  // next slot the reader looks at
  size_t writer_ = 0;  // next slot Put writes
  size_t live_ = 0;    // entries in the arc ending just before writer_
};

}  // namespace hammer::dark
