// IntrusiveList: a doubly linked list threaded through its elements, for queues whose
// elements come and go on a hot path (a connection joins the server's queue of connections
// waiting for a request head after every answer): no allocation per insertion, O(1) removal
// of any element, and an element knows whether it is linked.
//
// Ownership: none; an element must be removed before it is destroyed. An element may be in
// one list per IntrusiveLink member. Not thread-safe.
#pragma once

#include <cstddef>

namespace hammer {

template <typename T>
struct IntrusiveLink {
  T* prev = nullptr;
  T* next = nullptr;
  bool linked = false;
};

template <typename T, IntrusiveLink<T> T::*Link>
class IntrusiveList {
 public:
  IntrusiveList() = default;
  IntrusiveList(const IntrusiveList&) = delete;
  IntrusiveList& operator=(const IntrusiveList&) = delete;

  bool empty() const { return head_ == nullptr; }
  size_t size() const { return size_; }
  T* front() const { return head_; }
  static bool Contains(const T& element) { return (element.*Link).linked; }

  // Appends `element` (which must not be linked).
  void PushBack(T* element) {
    IntrusiveLink<T>& link = element->*Link;
    link.prev = tail_;
    link.next = nullptr;
    link.linked = true;
    if (tail_ != nullptr) {
      (tail_->*Link).next = element;
    } else {
      head_ = element;
    }
    tail_ = element;
    ++size_;
  }

  // Unlinks `element`; does nothing if it is not linked.
  void Remove(T* element) {
    IntrusiveLink<T>& link = element->*Link;
    if (!link.linked) return;
    if (link.prev != nullptr) {
      (link.prev->*Link).next = link.next;
    } else {
      head_ = link.next;
    }
    if (link.next != nullptr) {
      (link.next->*Link).prev = link.prev;
    } else {
      tail_ = link.prev;
    }
    link = IntrusiveLink<T>{};
    --size_;
  }

 private:
  T* head_ = nullptr;
  T* tail_ = nullptr;
  size_t size_ = 0;
};

}  // namespace hammer
