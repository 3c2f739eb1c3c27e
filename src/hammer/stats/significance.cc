#include "hammer/stats/significance.h"

#include <algorithm>
#include <cmath>

namespace hammer::stats {
namespace {

using Count = unsigned __int128;  // n_x·n_y pairs overflow 64 bits beyond 2^32 requests a side

uint64_t Total(std::span<const WeightedValue> sample) {
  uint64_t n = 0;
  for (const WeightedValue& v : sample)
    n += v.count;
  return n;
}

// Pairs (x_i, y_j), with their multiplicities, such that x_i − y_j <= d. One merge-like pass:
// as x_i grows, so does the bound x_i − d below which y values do not count.
Count PairsAtMost(std::span<const WeightedValue> x, std::span<const WeightedValue> y, uint64_t n_y,
                  int64_t d) {
  Count pairs = 0;
  size_t j = 0;
  uint64_t y_below = 0;  // y values < x_i − d
  for (const WeightedValue& xi : x) {
    while (j < y.size() && y[j].value < xi.value - d) {
      y_below += y[j].count;
      ++j;
    }
    pairs += static_cast<Count>(xi.count) * (n_y - y_below);
  }
  return pairs;
}

// The k-th smallest (1-based) of the differences x_i − y_j: the least d with k pairs at most d.
// Differences of integers are integers, so bisection over integers finds it exactly.
int64_t KthDifference(std::span<const WeightedValue> x, std::span<const WeightedValue> y,
                      uint64_t n_y, Count k, int64_t lowest, int64_t highest) {
  int64_t below = lowest - 1;  // fewer than k pairs at most this
  int64_t at = highest;        // at least k pairs at most this
  while (at - below > 1) {
    int64_t mid = below + (at - below) / 2;
    if (PairsAtMost(x, y, n_y, mid) >= k) {
      at = mid;
    } else {
      below = mid;
    }
  }
  return at;
}

double LogChoose(double n, double k) {
  return std::lgamma(n + 1) - std::lgamma(k + 1) - std::lgamma(n - k + 1);
}

}  // namespace

double NormalCdf(double z) {
  return 0.5 * std::erfc(-z / std::sqrt(2.0));
}

double NormalSurvival(double z) {
  return 0.5 * std::erfc(z / std::sqrt(2.0));
}

MannWhitneyResult MannWhitneyGreater(std::span<const WeightedValue> x,
                                     std::span<const WeightedValue> y, int64_t shift) {
  MannWhitneyResult result;
  result.n_x = Total(x);
  result.n_y = Total(y);
  if (result.n_x == 0 || result.n_y == 0) return result;

  // Ranks over the merged samples, each group of equal values sharing its average rank.
  long double rank_sum_x = 0;
  long double tie_term = 0;  // Σ (t³ − t) over groups of t equal values
  long double ranked = 0;    // observations ranked so far
  size_t i = 0, j = 0;
  while (i < x.size() || j < y.size()) {
    int64_t value = i < x.size() ? x[i].value - shift : y[j].value;
    if (j < y.size()) value = std::min(value, y[j].value);
    long double from_x = 0, from_y = 0;
    if (i < x.size() && x[i].value - shift == value)
      from_x = static_cast<long double>(x[i++].count);
    if (j < y.size() && y[j].value == value) from_y = static_cast<long double>(y[j++].count);
    long double tied = from_x + from_y;
    if (tied == 0) continue;
    rank_sum_x += from_x * (ranked + (tied + 1) / 2);
    tie_term += tied * tied * tied - tied;
    ranked += tied;
  }
  long double n_x = result.n_x, n_y = result.n_y, n = n_x + n_y;
  long double u = rank_sum_x - n_x * (n_x + 1) / 2;
  result.u = static_cast<double>(u);
  long double variance = n_x * n_y / 12 * ((n + 1) - tie_term / (n * (n - 1)));
  if (n < 2 || variance <= 0) return result;
  result.z = static_cast<double>((u - n_x * n_y / 2 - 0.5L) / std::sqrt(variance));
  result.p_value = NormalSurvival(result.z);
  return result;
}

double HodgesLehmannShift(std::span<const WeightedValue> x, std::span<const WeightedValue> y) {
  uint64_t n_x = Total(x), n_y = Total(y);
  if (n_x == 0 || n_y == 0) return 0;
  auto first = [](std::span<const WeightedValue> s) {
    return std::find_if(s.begin(), s.end(), [](const WeightedValue& v) { return v.count > 0; })
        ->value;
  };
  auto last = [](std::span<const WeightedValue> s) {
    return std::find_if(s.rbegin(), s.rend(), [](const WeightedValue& v) { return v.count > 0; })
        ->value;
  };
  int64_t lowest = first(x) - last(y), highest = last(x) - first(y);
  Count pairs = static_cast<Count>(n_x) * n_y;
  if (pairs % 2 == 1) {
    return static_cast<double>(KthDifference(x, y, n_y, pairs / 2 + 1, lowest, highest));
  }
  int64_t lower = KthDifference(x, y, n_y, pairs / 2, lowest, highest);
  int64_t upper = KthDifference(x, y, n_y, pairs / 2 + 1, lowest, highest);
  return (static_cast<double>(lower) + static_cast<double>(upper)) / 2;
}

double FisherExactGreater(uint64_t a_failures, uint64_t a_total, uint64_t b_failures,
                          uint64_t b_total) {
  if (a_total == 0 || b_total == 0) return 1;
  a_failures = std::min(a_failures, a_total);
  b_failures = std::min(b_failures, b_total);
  // K, the failures in A, is hypergeometric: a_total draws from N = a_total + b_total items of
  // which F = a_failures + b_failures are failures.
  double n = static_cast<double>(a_total + b_total);
  double f = static_cast<double>(a_failures + b_failures);
  double draws = static_cast<double>(a_total);
  double lowest = std::max(0.0, draws - (n - f));
  double highest = std::min(f, draws);
  double k = static_cast<double>(a_failures);
  if (k <= lowest) return 1;
  auto log_pmf = [&](double x) {
    return LogChoose(f, x) + LogChoose(n - f, draws - x) - LogChoose(n, draws);
  };
  // Sum whichever tail lies away from the mode, where terms only shrink, and stop once they no
  // longer change the sum: the upper tail from k, or one minus the lower tail below k.
  double mode = std::floor((draws + 1) * (f + 1) / (n + 2));
  constexpr double kNegligible = 1e-17;
  if (k > mode) {
    double term = std::exp(log_pmf(k)), sum = 0;
    for (double x = k; x <= highest && term > sum * kNegligible; ++x) {
      sum += term;
      term *= (f - x) * (draws - x) / ((x + 1) * (n - f - draws + x + 1));
    }
    return std::clamp(sum, 0.0, 1.0);
  }
  double term = std::exp(log_pmf(k - 1)), sum = 0;
  for (double x = k - 1; x >= lowest && term > sum * kNegligible; --x) {
    sum += term;
    term *= x * (n - f - draws + x) / ((f - x + 1) * (draws - x + 1));
  }
  return std::clamp(1 - sum, 0.0, 1.0);
}

}  // namespace hammer::stats
