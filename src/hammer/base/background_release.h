// ReleaseInBackground: destroys an object on a thread of its own, so that the caller goes on
// without paying for the destruction. At a load's end the 10,000 hash nodes of its key tables
// are freed once their rows are moved out: about 0.9 ms of free() on the thread that then
// prints the summary (each node goes back to the malloc arena of the worker thread that
// allocated it, under that arena's lock). Here they are freed while the summary is printed.
//
// One thread for the process, started at the first release, takes the objects in order; it is
// joined at exit (a static's destructor), after the last object handed to it is destroyed, so
// that nothing is leaked or freed after the allocator's end. Where no thread can be had, the
// object is destroyed at once, on the caller's thread. The object's destructor must not need
// the caller's thread or locks the caller holds. Thread-safe.
#pragma once

#include <memory>
#include <utility>

namespace hammer {

namespace release_detail {

struct Held {
  virtual ~Held() = default;
};

template <typename T>
struct HeldValue : Held {
  explicit HeldValue(T&& v) : value(std::move(v)) {}
  T value;
};

void Release(std::unique_ptr<Held> held);

}  // namespace release_detail

// Takes `object` by value: the caller moves it in.
template <typename T>
void ReleaseInBackground(T object) {
  release_detail::Release(std::make_unique<release_detail::HeldValue<T>>(std::move(object)));
}

}  // namespace hammer
