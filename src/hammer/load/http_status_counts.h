// HttpStatusCounts: a run's responses by HTTP status code (hey's "Status code distribution",
// vegeta's status_codes).
//
// Every request that got a final response (after the redirects it followed) is counted under
// that response's status, whatever its outcome: a 200 failed by --error-pattern is a 200, a 503
// is a 503 (and a response whose body was cut short, under its head's status). A request that
// got no response (a timeout, a refused connection, an invalid URL) is
// not counted here; its failure type says what happened. A code outside 100..999 (a status line
// has three digits) is not counted. A mergeable value; not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

namespace hammer::load {

struct HttpStatusCounts {
  static constexpr int kMinCode = 100;
  static constexpr int kMaxCode = 999;
  std::array<uint64_t, kMaxCode + 1 - kMinCode> by_code{};

  void Record(int code) {
    if (code >= kMinCode && code <= kMaxCode) ++by_code[static_cast<size_t>(code - kMinCode)];
  }
  void Merge(const HttpStatusCounts& other) {
    for (size_t i = 0; i < by_code.size(); ++i)
      by_code[i] += other.by_code[i];
  }
  // (code, responses) for every code counted, in code order.
  std::vector<std::pair<int, uint64_t>> Counted() const {
    std::vector<std::pair<int, uint64_t>> counted;
    for (size_t i = 0; i < by_code.size(); ++i) {
      if (by_code[i] > 0) counted.emplace_back(static_cast<int>(i) + kMinCode, by_code[i]);
    }
    return counted;
  }
};

}  // namespace hammer::load
