// Micro-benchmarks of Histogram's hot paths: Record (what the load workers and the reducer do per
// request or record) on a histogram that already holds its values' pages, and Record + Merge
// of keys with one sample each (what many distinct URLs cost). Build with
// `cmake -DHAMMER_BENCH=ON` and run build/<dir>/hammer_microbench.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "hammer/stats/histogram.h"

namespace {

using hammer::stats::Histogram;

// Latencies like a loopback run's: 50 µs to 20 ms, log-uniform.
std::vector<int64_t> Latencies(size_t n) {
  std::mt19937_64 random(42);
  std::uniform_real_distribution<double> exponent(std::log(50.0), std::log(20000.0));
  std::vector<int64_t> values(n);
  for (int64_t& v : values)
    v = static_cast<int64_t>(std::exp(exponent(random)));
  return values;
}

void BM_RecordWarm(benchmark::State& state) {
  const std::vector<int64_t> values = Latencies(1 << 16);
  Histogram histogram;
  for (int64_t v : values)
    histogram.Record(v);
  size_t i = 0;
  for (auto _ : state) {
    histogram.Record(values[i++ & (values.size() - 1)]);
  }
  benchmark::DoNotOptimize(histogram.total_count());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RecordWarm);
// A fixed count, for instruction counts under `valgrind --tool=callgrind`.
BENCHMARK(BM_RecordWarm)->Name("BM_RecordWarm_fixed")->Iterations(10'000'000);

// One histogram per key, one sample each, merged into a total: a run over distinct URLs.
void BM_OneSampleKeysMerged(benchmark::State& state) {
  const std::vector<int64_t> values = Latencies(1024);
  for (auto _ : state) {
    Histogram total;
    std::vector<Histogram> keys(1024);
    for (size_t k = 0; k < keys.size(); ++k)
      keys[k].Record(values[k]);
    for (const Histogram& key : keys)
      total.Merge(key);
    benchmark::DoNotOptimize(total.total_count());
  }
  state.SetItemsProcessed(state.iterations() * 1024);
}
BENCHMARK(BM_OneSampleKeysMerged);

}  // namespace
