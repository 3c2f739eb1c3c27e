#include "hammer/search/retry_backoff.h"

#include <algorithm>

namespace hammer::search {

Nanos RetryBackoff::Nominal(int attempt) const {
  Nanos delay = std::max<Nanos>(initial_delay, 0);
  for (int i = 1; i < attempt && delay < max_delay; ++i)
    delay *= 2;  // no shift overflow
  return std::min(delay, max_delay);
}

Nanos RetryBackoff::Delay(int attempt, uint64_t random) const {
  const Nanos nominal = Nominal(attempt);
  const Nanos half = nominal / 2;
  const uint64_t span = static_cast<uint64_t>(nominal - half) + 1;
  return half + static_cast<Nanos>(random % span);
}

}  // namespace hammer::search
