// InFlightSet<T>: the owner of the exchanges a DarkProxyHandler has started and that have not
// finished yet (PrimaryExchange, DarkCopy). Nothing in flight is ever owned by nobody.
//
// Life of an exchange: the handler creates it and Adopt()s it before handing it to an
// HttpClient. When its last callback (OnResponseComplete) has done its work, the exchange calls
// Finish(this) as its final statement: the set hands it to the loop's DeleteLater, so it is
// destroyed after the current loop iteration, never inside its own callback. When the handler
// stops with exchanges still in flight, it first cancels them in the HttpClient that carries
// them (HttpClient::CancelAll, after which no callback can reach them) and then TakeAll()s them
// to count and destroy them.
//
// Threading: the owning loop's thread only (or after that loop has stopped).
#pragma once

#include <cstddef>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hammer/net/event_loop.h"

namespace hammer::dark {

template <typename T>
class InFlightSet {
 public:
  explicit InFlightSet(net::EventLoop* loop) : loop_(loop) {}
  InFlightSet(const InFlightSet&) = delete;
  InFlightSet& operator=(const InFlightSet&) = delete;
  // Whatever was never finished nor taken is destroyed here; the owner cancels it first.
  ~InFlightSet() = default;

  // Takes ownership of a new exchange and returns it.
  T* Adopt(std::unique_ptr<T> exchange) {
    T* raw = exchange.get();
    items_.emplace(raw, std::move(exchange));
    return raw;
  }

  // The exchange is done: it is destroyed after the current loop iteration. Unknown pointers
  // (already taken) are ignored.
  void Finish(T* exchange) {
    auto it = items_.find(exchange);
    if (it == items_.end()) return;
    std::unique_ptr<T> owned = std::move(it->second);
    items_.erase(it);
    loop_->DeleteLater(std::move(owned));
  }

  // Everything still in flight, for the owner to count and destroy (after cancelling it).
  std::vector<std::unique_ptr<T>> TakeAll() {
    std::vector<std::unique_ptr<T>> out;
    out.reserve(items_.size());
    for (auto& [raw, owned] : items_)
      out.push_back(std::move(owned));
    items_.clear();
    return out;
  }

  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }

 private:
  net::EventLoop* loop_;
  std::unordered_map<T*, std::unique_ptr<T>> items_;
};

}  // namespace hammer::dark
