// Significance tests for judging a canary against its baseline (`hammer dark`'s verdict): the
// normal distribution, the Mann-Whitney U rank test with its Hodges-Lehmann shift estimate,
// and Fisher's exact test for two proportions. Pure functions on counts; thread-safe.
//
// Samples are given as distinct values with their counts (WeightedValue), ascending, so a
// latency histogram's buckets are tested as they are, without expanding millions of requests
// into a vector: every request of a bucket carries the bucket's value, and requests sharing a
// value are ties, which the tests below correct for exactly. Values are integers (microseconds
// in hammer), so every comparison is exact.
//
// The formulas, and the values the unit tests check them against, are the textbook ones as
// implemented by SciPy (scipy.stats.norm, mannwhitneyu with method="asymptotic" and
// use_continuity=True, fisher_exact): Mann & Whitney (1947), Hodges & Lehmann (1963),
// Fisher (1935); e.g.
// https://docs.scipy.org/doc/scipy/reference/generated/scipy.stats.mannwhitneyu.html
#pragma once

#include <cstdint>
#include <span>

namespace hammer::stats {

// Φ(z), the standard normal distribution function, and 1 − Φ(z) computed without
// cancellation, so that upper-tail probabilities stay accurate far below 1e-16.
double NormalCdf(double z);
double NormalSurvival(double z);

// One distinct value of a sample and how many times it occurs. Spans of these must be sorted by
// strictly increasing value; entries with count 0 are allowed and ignored.
struct WeightedValue {
  int64_t value = 0;
  uint64_t count = 0;
};

struct MannWhitneyResult {
  uint64_t n_x = 0;
  uint64_t n_y = 0;
  double u = 0;        // U of x: pairs with x − shift > y, plus half the pairs that tie
  double z = 0;        // (u − n_x·n_y/2 − 1/2) / σ, σ corrected for ties
  double p_value = 1;  // one-sided: 1 − Φ(z)
};

// Mann-Whitney U test, one-sided, normal approximation with continuity and tie correction: is x
// stochastically greater than y + shift? Subtracting `shift` from every x first makes this the
// test of "x exceeds y by more than shift", i.e. significance and effect size in one test.
// p_value is 1 (and z 0) when a sample is empty or every value ties (σ = 0).
MannWhitneyResult MannWhitneyGreater(std::span<const WeightedValue> x,
                                     std::span<const WeightedValue> y, int64_t shift = 0);

// The Hodges-Lehmann estimate of how much x exceeds y: the median of the n_x·n_y differences
// x_i − y_j (the mean of the two middle ones when their number is even). Exact, in
// O((distinct x + distinct y) · log(range)) time. 0 when a sample is empty.
double HodgesLehmannShift(std::span<const WeightedValue> x, std::span<const WeightedValue> y);

// Fisher's exact test, one-sided: do failures occur more often in group A (a_failures of
// a_total) than in group B (b_failures of b_total)? Returns P(K ≥ a_failures) for K
// hypergeometric with the 2×2 table's margins, i.e. SciPy's
// fisher_exact([[a_failures, a_total − a_failures], [b_failures, b_total − b_failures]],
// alternative="greater"). 1 when a group is empty. Failures above their total are clamped.
double FisherExactGreater(uint64_t a_failures, uint64_t a_total, uint64_t b_failures,
                          uint64_t b_total);

}  // namespace hammer::stats
