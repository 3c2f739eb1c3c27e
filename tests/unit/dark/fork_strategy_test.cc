// RelativeStrategy and IdenticalSelector against rest.li's reference cases (the cases of
// TestRelativeTrafficMultiplierDarkClusterStrategy and TestIdenticalTrafficMultiplierDarkCluster-
// Strategy in github.com/linkedin/rest.li) and the properties the header promises.
#include "hammer/dark/fork_strategy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace hammer::dark {
namespace {

// TestRelativeTrafficMultiplierDarkClusterStrategy: (iterations, m, Ns, Nd) -> expected, where
// expected = (int)(iterations · m · Nd) / Ns; rest.li asserts ±30 %.
struct RelativeRow {
  int iterations;
  double multiplier;
  uint32_t regular;  // Ns
  uint32_t dark;     // Nd
  int expected;
};

constexpr RelativeRow kRelativeRows[] = {
    {0, 0, 10, 10, 0},        {0, 1, 10, 10, 0},         {10, 10, 10, 0, 0},
    {1000, 0.1, 10, 10, 100}, {1000, 0.25, 10, 10, 250}, {1000, 0.5, 10, 10, 500},
    {1000, 1, 10, 10, 1000},  {1000, 1.5, 10, 10, 1500}, {100, 2, 10, 10, 200},
    {1000, 1, 10, 1, 100},    {1000, 0.9, 10, 1, 90},    {1000, 1.2, 10, 1, 120},
    {1000, 1, 10, 2, 200},    {1000, 1, 40, 3, 75},      {1000, 2, 10, 1, 200},
    {1000, 2.5, 10, 1, 250},  {1000, 4, 10, 1, 400},
};

uint64_t CountCopies(RelativeStrategy& strategy, const ClusterShape& shape, int iterations) {
  uint64_t copies = 0;
  for (int i = 0; i < iterations; ++i)
    copies += strategy.CopiesFor(shape);
  return copies;
}

TEST(CopiesPerRequestTest, RestLiJavadocExamples) {
  EXPECT_DOUBLE_EQ(CopiesPerRequest({1.0, 10, 2, 0}), 0.2);
  EXPECT_DOUBLE_EQ(CopiesPerRequest({1.2, 10, 2, 0}), 0.24);
  EXPECT_NEAR(CopiesPerRequest({0.5, 7, 1, 0}), 0.0714, 1e-4);
  EXPECT_DOUBLE_EQ(CopiesPerRequest({1.5, 10, 10, 0}), 1.5);
  // The blog: 100 inbound QPS, m = 1, Nd = 2, Ns = 100 -> 0.02 copies per request = 2 QPS.
  EXPECT_DOUBLE_EQ(100 * CopiesPerRequest({1.0, 100, 2, 0}), 2.0);
}

TEST(CopiesPerRequestTest, NothingWithoutRegularInstancesOrAPositiveMultiplier) {
  EXPECT_EQ(CopiesPerRequest({1.0, 0, 5, 0}), 0);
  EXPECT_EQ(CopiesPerRequest({0.0, 10, 5, 0}), 0);
  EXPECT_EQ(CopiesPerRequest({-1.0, 10, 5, 0}), 0);
  EXPECT_EQ(CopiesPerRequest({std::nan(""), 10, 5, 0}), 0);
  EXPECT_EQ(CopiesPerRequest({INFINITY, 10, 5, 0}), 0);
  EXPECT_EQ(CopiesPerRequest({1e6, 1, 1000, 0}), kMaxCopiesPerRequest);
}

TEST(RelativeStrategyTest, AccumulatorMatchesEveryRestLiRowExactlyForEverySeed) {
  // Every row's iterations · m · Nd / Ns is a whole number, and the accumulator sends
  // floor(phase + Σ avg): so each row comes out exactly, whatever the phase.
  for (const RelativeRow& row : kRelativeRows) {
    for (uint64_t seed = 1; seed <= 200; ++seed) {
      RelativeStrategy strategy(seed);
      uint64_t copies =
          CountCopies(strategy, {row.multiplier, row.regular, row.dark, 0}, row.iterations);
      ASSERT_EQ(copies, static_cast<uint64_t>(row.expected))
          << "m=" << row.multiplier << " Ns=" << row.regular << " Nd=" << row.dark
          << " seed=" << seed;
    }
  }
}

TEST(RelativeStrategyTest, AccumulatorIsWithinOneOfTheExpectationForAnyRunLength) {
  const double multipliers[] = {0.1, 0.25, 1 / 3.0, 0.9, 1.2, 1.5, 2.5, 0.0714};
  for (double m : multipliers) {
    for (uint32_t regular : {7u, 10u, 40u, 400u}) {
      ClusterShape shape{m, regular, 3, 0};
      double average = CopiesPerRequest(shape);
      RelativeStrategy strategy(regular * 1000 + static_cast<uint64_t>(m * 100));
      uint64_t copies = 0;
      for (int n = 1; n <= 20000; ++n) {
        copies += strategy.CopiesFor(shape);
        ASSERT_LE(std::abs(static_cast<double>(copies) - n * average), 1.0)
            << "m=" << m << " Ns=" << regular << " after " << n;
      }
    }
  }
}

TEST(RelativeStrategyTest, BlogExampleIsTwoDarkRequestsPerSecond) {
  // One hour at 100 inbound QPS with m = 1, Nd = 2, Ns = 100: 7200 copies, ±1.
  RelativeStrategy strategy(42);
  uint64_t copies = CountCopies(strategy, {1.0, 100, 2, 0}, 3600 * 100);
  EXPECT_NEAR(static_cast<double>(copies), 7200, 1);
}

TEST(RelativeStrategyTest, LongRunStaysWithinOne) {
  RelativeStrategy strategy(7);
  ClusterShape shape{0.1, 10, 1, 0};  // 0.01 copies per request
  uint64_t copies = CountCopies(strategy, shape, 10'000'000);
  EXPECT_NEAR(static_cast<double>(copies), 100'000, 1);
}

TEST(RelativeStrategyTest, ShapeChangesKeepTheCreditSoNeitherBurstNorLoss) {
  std::mt19937_64 rng(3);
  RelativeStrategy strategy(11);
  double expected = 0;
  uint64_t copies = 0;
  ClusterShape shape{1.0, 10, 1, 0};
  for (int i = 0; i < 100000; ++i) {
    if (i % 137 == 0) {  // a membership update: Nd and Ns move
      shape.dark_instances = static_cast<uint32_t>(rng() % 5);
      shape.regular_instances = 1 + static_cast<uint32_t>(rng() % 20);
    }
    double before = strategy.credit();
    uint32_t n = strategy.CopiesFor(shape);
    // Never more than the whole part of (carried credit + this request's share): no burst.
    ASSERT_EQ(n, static_cast<uint32_t>(std::floor(before + CopiesPerRequest(shape))));
    copies += n;
    expected += CopiesPerRequest(shape);
    ASSERT_LE(std::abs(static_cast<double>(copies) - expected), 1.0) << i;
  }
}

TEST(RelativeStrategyTest, NoRegularInstancesSendsNothingAndKeepsTheCredit) {
  RelativeStrategy strategy(5);
  double credit = strategy.credit();
  EXPECT_GE(credit, 0);
  EXPECT_LT(credit, 1);
  EXPECT_EQ(CountCopies(strategy, {1.0, 0, 10, 0}, 1000), 0u);
  EXPECT_EQ(strategy.credit(), credit);
}

TEST(RelativeStrategyTest, PhasesDifferBetweenSeeds) {
  RelativeStrategy a(1);
  RelativeStrategy b(2);
  EXPECT_NE(a.credit(), b.credit());
}

TEST(RelativeStrategyTest, BernoulliMatchesRestLiRowsWithinThirtyPercentAndWholeRowsExactly) {
  for (const RelativeRow& row : kRelativeRows) {
    RelativeStrategy strategy(2, RelativeStrategy::Mode::kBernoulli);  // rest.li: seed 2
    ClusterShape shape{row.multiplier, row.regular, row.dark, 0};
    auto copies = static_cast<double>(CountCopies(strategy, shape, row.iterations));
    EXPECT_NEAR(copies, row.expected, row.expected * 0.30)
        << "m=" << row.multiplier << " Ns=" << row.regular << " Nd=" << row.dark;
    double average = CopiesPerRequest(shape);
    if (average == std::floor(average)) {
      EXPECT_EQ(copies, row.expected) << "m=" << row.multiplier;
    }
  }
}

TEST(RelativeStrategyTest, BernoulliIsUnbiased) {
  RelativeStrategy strategy(9, RelativeStrategy::Mode::kBernoulli);
  ClusterShape shape{2.5, 10, 1, 0};  // 0.25
  const int n = 1'000'000;
  auto copies = static_cast<double>(CountCopies(strategy, shape, n));
  double sigma = std::sqrt(n * 0.25 * 0.75);
  EXPECT_NEAR(copies, n * 0.25, 5 * sigma);
  // Whole part always sent: 1.5 gives 1 or 2 copies, never 0 or 3.
  RelativeStrategy more(9, RelativeStrategy::Mode::kBernoulli);
  for (int i = 0; i < 1000; ++i) {
    uint32_t c = more.CopiesFor({1.5, 10, 10, 0});
    ASSERT_TRUE(c == 1 || c == 2);
  }
}

// TestIdenticalTrafficMultiplierDarkClusterStrategy: Ns = Nd = 1, m = 0.1, 0.2, 0.3 for A, B,
// C; sent to c iff r < m_c; same result in three cluster orders.
TEST(IdenticalSelectorTest, RestLiCasesInThreeOrders) {
  struct Cluster {
    char name;
    double multiplier;
  };
  const Cluster a{'A', 0.1};
  const Cluster b{'B', 0.2};
  const Cluster c{'C', 0.3};
  const std::vector<std::vector<Cluster>> orders = {{a, b, c}, {b, c, a}, {c, a, b}};
  struct Case {
    double r;
    bool a, b, c;
  };
  const Case cases[] = {{0.05, true, true, true},
                        {0.15, false, true, true},
                        {0.25, false, false, true},
                        {0.35, false, false, false}};
  for (const Case& test : cases) {
    for (const auto& order : orders) {
      IdenticalSelector selector(test.r);
      for (const Cluster& cluster : order) {
        bool sent = selector.CopiesFor({cluster.multiplier, 1, 1, 0}) > 0;
        bool expected = cluster.name == 'A' ? test.a : cluster.name == 'B' ? test.b : test.c;
        EXPECT_EQ(sent, expected) << "r=" << test.r << " cluster " << cluster.name;
      }
      EXPECT_EQ(selector.u(), test.r);  // the stored number is r
    }
  }
}

TEST(IdenticalSelectorTest, DrawsExactlyOneNumberPerRequest) {
  std::mt19937_64 rng(17);
  std::mt19937_64 expected = rng;
  IdenticalSelector selector(rng, "", {});
  expected();
  EXPECT_EQ(rng, expected);
  for (int i = 0; i < 5; ++i)
    (void)selector.CopiesFor({0.5, 1, 1, 0});
  EXPECT_EQ(rng, expected);  // asking for several clusters draws nothing more
  EXPECT_FALSE(selector.from_header());
}

TEST(IdenticalSelectorTest, SmallerRatiosGetASubsetOfLargerOnes) {
  std::mt19937_64 rng(1);
  const ClusterShape small{0.5, 10, 2, 0};   // 0.1
  const ClusterShape medium{1.0, 10, 3, 0};  // 0.3
  const ClusterShape large{2.0, 40, 14, 0};  // 0.7
  int counts[3] = {0, 0, 0};
  for (int i = 0; i < 100000; ++i) {
    IdenticalSelector selector(rng, "", {});
    bool s = selector.CopiesFor(small) > 0;
    bool m = selector.CopiesFor(medium) > 0;
    bool l = selector.CopiesFor(large) > 0;
    ASSERT_TRUE(!s || m);
    ASSERT_TRUE(!m || l);
    counts[0] += s;
    counts[1] += m;
    counts[2] += l;
  }
  EXPECT_NEAR(counts[0], 10000, 500);
  EXPECT_NEAR(counts[1], 30000, 700);
  EXPECT_NEAR(counts[2], 70000, 700);
}

TEST(IdenticalSelectorTest, WholeAndFractionalCopies) {
  EXPECT_EQ(IdenticalSelector(0.49).CopiesFor({1.5, 10, 10, 0}), 2u);
  EXPECT_EQ(IdenticalSelector(0.5).CopiesFor({1.5, 10, 10, 0}), 1u);
  EXPECT_EQ(IdenticalSelector(0.99).CopiesFor({2.0, 10, 10, 0}), 2u);
  EXPECT_EQ(IdenticalSelector(0.0).CopiesFor({1.0, 0, 10, 0}), 0u);  // Ns = 0
}

TEST(IdenticalSelectorTest, HeaderDerivedNumberIsTheSameOnEveryHop) {
  const http::Header headers[] = {{"Accept", "*/*"}, {"x-request-id", "req-1"}};
  std::mt19937_64 first_hop(1);
  std::mt19937_64 second_hop(999);
  IdenticalSelector a(first_hop, "X-Request-Id", headers);
  IdenticalSelector b(second_hop, "x-request-id", headers);
  EXPECT_TRUE(a.from_header());
  EXPECT_EQ(a.u(), b.u());
  EXPECT_EQ(a.u(), UniformFromKey("req-1"));
  std::mt19937_64 untouched(1);
  EXPECT_EQ(first_hop, untouched);  // no draw when the header decides

  // Absent or empty header: a random draw instead.
  const http::Header empty[] = {{"X-Request-Id", ""}};
  IdenticalSelector c(first_hop, "X-Request-Id", empty);
  IdenticalSelector d(first_hop, "X-Other", headers);
  EXPECT_FALSE(c.from_header());
  EXPECT_FALSE(d.from_header());
  EXPECT_NE(c.u(), d.u());
}

TEST(UniformFromKeyTest, SpecifiedFunctionForOtherImplementations) {
  // FNV-1a 64 test vectors, then the values a Python transcription of the header's
  // specification gives.
  static_assert(Fnv1a64("") == 0xcbf29ce484222325ULL);
  static_assert(Fnv1a64("a") == 0xaf63dc4c8601ec8cULL);
  static_assert(Fmix64(Fnv1a64("req-1")) == 0x41bf9201cad1d3b5ULL);
  EXPECT_DOUBLE_EQ(UniformFromKey("req-1"), 0.2568293814063687);
  EXPECT_DOUBLE_EQ(UniformFromKey("7f2c1d9e-request"), 0.790512984263016);
}

TEST(UniformFromKeyTest, SequentialIdsAreSpreadEvenly) {
  int buckets[10] = {};
  const int n = 100000;
  for (int i = 0; i < n; ++i) {
    double u = UniformFromKey("req-" + std::to_string(i));
    ASSERT_GE(u, 0);
    ASSERT_LT(u, 1);
    ++buckets[static_cast<int>(u * 10)];
  }
  for (int count : buckets)
    EXPECT_NEAR(count, n / 10, 500);  // ~5 sigma
}

}  // namespace
}  // namespace hammer::dark
