#include "hammer/stats/significance.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

namespace hammer::stats {
namespace {

// The expected figures were computed once with SciPy 1.17.1 / NumPy (Python), independently of
// this code:
//   scipy.stats.norm.cdf / norm.sf
//   scipy.stats.mannwhitneyu(x - shift, y, alternative="greater", method="asymptotic",
//                            use_continuity=True)      -> U and p
//   numpy.median(numpy.subtract.outer(x, y).ravel())    -> Hodges-Lehmann shift
//   scipy.stats.fisher_exact(table, alternative="greater").pvalue

std::vector<WeightedValue> Weigh(std::vector<int64_t> values) {
  std::map<int64_t, uint64_t> counts;
  for (int64_t v : values)
    ++counts[v];
  std::vector<WeightedValue> out;
  for (auto [value, count] : counts)
    out.push_back(WeightedValue{value, count});
  return out;
}

// Deterministic samples that Python reproduces exactly:
//   a = [100 + (i * 7919) % 1000 for i in range(2000)]
//   b = [160 + (i * 104729) % 1200 for i in range(1500)]
std::vector<int64_t> SampleA(int64_t bucket = 1) {
  std::vector<int64_t> a;
  for (int64_t i = 0; i < 2000; ++i)
    a.push_back((100 + (i * 7919) % 1000) / bucket * bucket);
  return a;
}
std::vector<int64_t> SampleB(int64_t bucket = 1) {
  std::vector<int64_t> b;
  for (int64_t i = 0; i < 1500; ++i)
    b.push_back((160 + (i * 104729) % 1200) / bucket * bucket);
  return b;
}

void ExpectRelativelyNear(double expected, double actual, double relative) {
  EXPECT_NEAR(actual, expected, std::abs(expected) * relative) << "expected " << expected;
}

TEST(SignificanceTest, NormalDistribution) {
  EXPECT_DOUBLE_EQ(NormalCdf(0), 0.5);
  EXPECT_NEAR(NormalCdf(1.96), 0.9750021048517795, 1e-15);
  EXPECT_NEAR(NormalCdf(-1), 0.15865525393145707, 1e-15);
  EXPECT_NEAR(NormalSurvival(-2.5), 0.9937903346742238, 1e-15);
  // Far in the tail, where 1 − Φ(z) would round to 0.
  ExpectRelativelyNear(6.22096057427174e-16, NormalSurvival(8), 1e-12);
  ExpectRelativelyNear(5.7255712225239266e-300, NormalSurvival(37), 1e-9);
}

TEST(SignificanceTest, MannWhitneySmallSampleFromScipysDocumentation) {
  // The example of scipy.stats.mannwhitneyu's documentation (ages of male and female authors).
  auto males = Weigh({19, 22, 16, 29, 24});
  auto females = Weigh({20, 11, 17, 12});
  MannWhitneyResult r = MannWhitneyGreater(males, females);
  EXPECT_EQ(r.n_x, 5u);
  EXPECT_EQ(r.n_y, 4u);
  EXPECT_DOUBLE_EQ(r.u, 17);
  EXPECT_NEAR(r.p_value, 0.055673443266570206, 1e-12);
  EXPECT_DOUBLE_EQ(HodgesLehmannShift(males, females), 7);
}

TEST(SignificanceTest, MannWhitneyWithTies) {
  auto x = Weigh({1, 2, 2, 3, 3, 3, 5});
  auto y = Weigh({1, 1, 2, 4, 4});
  MannWhitneyResult r = MannWhitneyGreater(x, y);
  EXPECT_DOUBLE_EQ(r.u, 20);
  EXPECT_NEAR(r.p_value, 0.3697775542849706, 1e-12);
  MannWhitneyResult reversed = MannWhitneyGreater(y, x);
  EXPECT_DOUBLE_EQ(reversed.u, 15);
  EXPECT_NEAR(reversed.p_value, 0.6909918867871797, 1e-12);
  EXPECT_DOUBLE_EQ(HodgesLehmannShift(x, y), 1);
}

TEST(SignificanceTest, MannWhitneyLargeSamplesWithAShift) {
  auto a = Weigh(SampleA());
  auto b = Weigh(SampleB());
  struct Case {
    int64_t shift;
    double u;
    double p;
  };
  for (Case c :
       {Case{0, 1896266, 3.263970295306314e-41}, Case{50, 1775725, 5.824605079212169e-21},
        Case{100, 1650934, 1.6825750826063435e-07}, Case{130, 1575952, 0.005125232728479281}}) {
    MannWhitneyResult r = MannWhitneyGreater(b, a, c.shift);
    EXPECT_EQ(r.n_x, 1500u);
    EXPECT_EQ(r.n_y, 2000u);
    EXPECT_DOUBLE_EQ(r.u, c.u) << "shift " << c.shift;
    ExpectRelativelyNear(c.p, r.p_value, 1e-9);
  }
  EXPECT_DOUBLE_EQ(HodgesLehmannShift(b, a), 160);
  EXPECT_DOUBLE_EQ(HodgesLehmannShift(a, b), -160);
}

TEST(SignificanceTest, MannWhitneyOnBucketedValuesCorrectsForTies) {
  // Values rounded down to 50: every sample lands in one of ~25 buckets, as in a histogram.
  auto a = Weigh(SampleA(50));
  auto b = Weigh(SampleB(50));
  ASSERT_LT(a.size(), 30u);
  MannWhitneyResult r = MannWhitneyGreater(b, a);
  EXPECT_DOUBLE_EQ(r.u, 1895700);
  ExpectRelativelyNear(3.5485958636320807e-41, r.p_value, 1e-9);
  MannWhitneyResult shifted = MannWhitneyGreater(b, a, 60);
  EXPECT_DOUBLE_EQ(shifted.u, 1713300);
  ExpectRelativelyNear(2.7573381613056786e-13, shifted.p_value, 1e-9);
  EXPECT_DOUBLE_EQ(HodgesLehmannShift(b, a), 150);
}

TEST(SignificanceTest, MannWhitneyDegenerateSamples) {
  std::vector<WeightedValue> empty;
  auto one = Weigh({5});
  EXPECT_EQ(MannWhitneyGreater(empty, one).p_value, 1);
  EXPECT_EQ(MannWhitneyGreater(one, empty).p_value, 1);
  // Every value ties: no evidence either way.
  auto same = Weigh({7, 7, 7});
  MannWhitneyResult r = MannWhitneyGreater(same, same);
  EXPECT_EQ(r.p_value, 1);
  EXPECT_DOUBLE_EQ(r.u, 4.5);
  // Zero counts are ignored.
  std::vector<WeightedValue> sparse = {{1, 0}, {3, 2}, {9, 0}};
  EXPECT_DOUBLE_EQ(HodgesLehmannShift(sparse, one), -2);
  EXPECT_EQ(HodgesLehmannShift(empty, one), 0);
}

TEST(SignificanceTest, HodgesLehmannMatchesTheBruteForceMedian) {
  std::vector<int64_t> x, y;
  for (int64_t i = 0; i < 37; ++i)
    x.push_back((i * 31) % 23 + 4);
  for (int64_t i = 0; i < 18; ++i)
    y.push_back((i * 17) % 11);
  std::vector<double> differences;
  for (int64_t xi : x) {
    for (int64_t yj : y)
      differences.push_back(static_cast<double>(xi - yj));
  }
  std::sort(differences.begin(), differences.end());
  size_t m = differences.size();  // even: the mean of the two middle differences
  double median = (differences[m / 2 - 1] + differences[m / 2]) / 2;
  EXPECT_DOUBLE_EQ(HodgesLehmannShift(Weigh(x), Weigh(y)), median);
}

TEST(SignificanceTest, FisherExactOneSided) {
  struct Case {
    uint64_t a_fail, a_total, b_fail, b_total;
    double p;
  };
  for (Case c : {
           Case{8, 10, 1, 6, 0.024475524475524483},
           Case{3, 50, 0, 50, 0.12121212121212122},  // a handful of errors on little traffic
           Case{7, 2000, 0, 2000, 0.007771525426525834},
           Case{40, 2000, 0, 2000, 7.469072998268716e-13},
           Case{0, 100, 5, 100, 1.0},
           Case{12, 1000, 10, 1000, 0.4154397016704805},
           Case{500, 100000, 400, 100000, 0.00046568086821909265},
           Case{30, 1000, 10, 1000, 0.0010041667809150047},
       }) {
    double p = FisherExactGreater(c.a_fail, c.a_total, c.b_fail, c.b_total);
    ExpectRelativelyNear(c.p, p, 1e-9);
  }
  EXPECT_EQ(FisherExactGreater(0, 0, 3, 10), 1);
  EXPECT_EQ(FisherExactGreater(0, 10, 0, 10), 1);
}

}  // namespace
}  // namespace hammer::stats
