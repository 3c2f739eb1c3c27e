// BufferBudget: the process-wide count of bytes a server holds in buffers on behalf of its
// clients (connection input and output, request bodies, and what the dark proxy keeps of
// requests and responses), against a limit. It does not allocate or refuse anything itself:
// a server checks it before taking a new request (`--max-buffered-bytes`; Envoy's overload
// manager works the same way: a resource monitor, and actions when it runs high) and every
// holder of a buffer reports its size through a BufferCharge.
//
// Threading: every method is thread-safe (relaxed atomics); several event loops share one
// budget. A BufferCharge belongs to one thread (its holder's loop).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace hammer::http {

class BufferBudget {
 public:
  // limit 0: no limit (the bytes are still counted).
  explicit BufferBudget(uint64_t limit = 0) : limit_(limit) {}
  BufferBudget(const BufferBudget&) = delete;
  BufferBudget& operator=(const BufferBudget&) = delete;

  uint64_t limit() const { return limit_; }
  uint64_t used() const {
    int64_t used = used_.load(std::memory_order_relaxed);
    return used > 0 ? static_cast<uint64_t>(used) : 0;
  }
  // True when taking `more` bytes would go past the limit (never with no limit).
  bool WouldExceed(uint64_t more) const { return limit_ != 0 && used() + more > limit_; }
  // True once the limit is reached: new requests are refused.
  bool exhausted() const { return limit_ != 0 && used() >= limit_; }

 private:
  friend class BufferCharge;
  void Add(int64_t delta) { used_.fetch_add(delta, std::memory_order_relaxed); }

  const uint64_t limit_;
  std::atomic<int64_t> used_{0};
};

// What one holder has charged to a budget: Set() reports the holder's current size (only a
// change touches the shared counter), and destruction gives it all back. A charge without a
// budget does nothing. Movable, not copyable.
class BufferCharge {
 public:
  explicit BufferCharge(BufferBudget* budget = nullptr) : budget_(budget) {}
  BufferCharge(BufferCharge&& other) noexcept : budget_(other.budget_), charged_(other.charged_) {
    other.charged_ = 0;
  }
  BufferCharge& operator=(BufferCharge&& other) noexcept {
    if (this != &other) {
      Set(0);
      budget_ = other.budget_;
      charged_ = other.charged_;
      other.charged_ = 0;
    }
    return *this;
  }
  BufferCharge(const BufferCharge&) = delete;
  BufferCharge& operator=(const BufferCharge&) = delete;
  ~BufferCharge() { Set(0); }

  void Set(size_t bytes) {
    if (budget_ == nullptr || bytes == charged_) return;
    budget_->Add(static_cast<int64_t>(bytes) - static_cast<int64_t>(charged_));
    charged_ = bytes;
  }
  size_t charged() const { return charged_; }
  BufferBudget* budget() const { return budget_; }

 private:
  BufferBudget* budget_;
  size_t charged_ = 0;
};

}  // namespace hammer::http
