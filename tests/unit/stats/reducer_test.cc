#include "hammer/stats/reducer.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <random>
#include <string>
#include <vector>

#include "hammer/stats/partial.h"
#include "hammer/stats/record.h"
#include "hammer/stats/report/tsv.h"

namespace hammer::stats {
namespace {

using Keys = std::vector<std::pair<std::string, KeyStats>>;

struct Collect : KeySink {
  Keys keys;
  void OnKey(std::string_view key, const KeyStats& stats) override {
    keys.emplace_back(std::string(key), stats);
  }
};

Keys Reduce(const std::vector<std::string>& lines, Reducer::Options options = {},
            uint64_t* malformed = nullptr) {
  Collect collect;
  Reducer reducer(options, &collect);
  for (const std::string& line : lines)
    reducer.OnLine(line);
  reducer.Finish();
  if (malformed != nullptr) *malformed = reducer.malformed();
  return collect.keys;
}

std::string ReducerOutput(const Keys& keys) {
  std::string out;
  for (const auto& [key, stats] : keys)
    AppendReducerLine(out, key, stats);
  return out;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// The combiner: a part's records as partial lines.
std::vector<std::string> Combine(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& [key, stats] : Reduce(lines))
    AppendPartialRecord(out, key, stats);
  return Lines(out);
}

std::vector<std::string> Names(const Keys& keys) {
  std::vector<std::string> names;
  for (const auto& entry : keys)
    names.push_back(entry.first);
  return names;
}

TEST(ReducerTest, SortedInputStreamsOneKeyAtATime) {
  Collect collect;
  Reducer::Options options;
  options.window_keys = 2;
  Reducer reducer(options, &collect);
  reducer.OnLine("a\t0.001");
  reducer.OnLine("a\t");
  reducer.OnLine("b\t0.002");
  EXPECT_TRUE(collect.keys.empty());  // a is held while the window is open
  reducer.OnLine("c\t0.003");         // b complete: window full, a and b go out
  ASSERT_EQ(collect.keys.size(), 2u);
  reducer.OnLine("d\t0.004");  // from now on each key leaves as soon as it is complete
  EXPECT_EQ(collect.keys.size(), 3u);
  reducer.Finish();
  EXPECT_EQ(Names(collect.keys), (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(collect.keys[0].second.count, 1u);
  EXPECT_EQ(collect.keys[0].second.errors, 1u);
  EXPECT_TRUE(reducer.sorted());
}

TEST(ReducerTest, UnsortedInputIsDetectedAndAggregatedInMemory) {
  Collect collect;
  Reducer reducer({}, &collect);
  for (const char* line : {"b\t0.001", "a\t0.002", "b\t0.003", "c\t", "a\t0.004"})
    reducer.OnLine(line);
  reducer.Finish();
  EXPECT_FALSE(reducer.sorted());
  EXPECT_EQ(reducer.late_unsorted_line(), 0u);
  ASSERT_EQ(Names(collect.keys), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(collect.keys[0].second.sum_micros, 6000);
  EXPECT_EQ(collect.keys[1].second.sum_micros, 4000);
  EXPECT_EQ(collect.keys[2].second.errors, 1u);

  Reducer::Options unsorted;
  unsorted.order = Reducer::Order::kUnsorted;
  EXPECT_EQ(Reduce({"b\t1", "a\t2", "b\t3"}, unsorted), Reduce({"a\t2", "b\t3", "b\t1"}));
}

TEST(ReducerTest, UnsortedAfterTheWindowIsReported) {
  Collect collect;
  Reducer::Options options;
  options.window_keys = 2;
  Reducer reducer(options, &collect);
  for (const char* line : {"a\t1", "b\t1", "c\t1", "d\t1", "a\t2"})
    reducer.OnLine(line);
  reducer.Finish();
  EXPECT_EQ(reducer.late_unsorted_line(), 5u);
  // a and b had left before the input broke order: a appears twice.
  EXPECT_EQ(Names(collect.keys), (std::vector<std::string>{"a", "b", "c", "a", "d"}));
}

// Options::max_keys: sorted or not, more distinct keys than the budget come out grouped by
// template, with every record still counted.
TEST(ReducerTest, MaxKeysGroupsKeysByTemplateWhateverTheOrder) {
  std::vector<std::string> lines;
  for (int i = 0; i < 50; ++i)
    lines.push_back("/item/" + std::to_string(100 + i) + "\t0.00" + std::to_string(i % 10));
  lines.push_back("/search\t");
  for (bool shuffled : {false, true}) {
    std::vector<std::string> input = lines;
    if (shuffled) std::shuffle(input.begin(), input.end(), std::mt19937(7));
    Reducer::Options options;
    options.max_keys = 4;
    Collect collect;
    Reducer reducer(options, &collect);
    for (const std::string& line : input)
      reducer.OnLine(line);
    reducer.Finish();
    ASSERT_EQ(collect.keys.size(), 2u);
    EXPECT_EQ(collect.keys[0].first, "/item/{id}");
    EXPECT_EQ(collect.keys[0].second.count, 50u);
    EXPECT_EQ(collect.keys[0].second.histogram.total_count(), 50u);
    EXPECT_EQ(collect.keys[1].first, "/search");
    EXPECT_EQ(collect.keys[1].second.errors, 1u);
    EXPECT_TRUE(reducer.key_folding().folded);
    EXPECT_EQ(reducer.key_folding().rows, 2u);
  }
  // Without a budget every key stays.
  EXPECT_EQ(Reduce(lines).size(), 51u);
}

TEST(ReducerTest, MalformedLinesNeverChangeFigures) {
  Collect collect;
  Reducer reducer({}, &collect);
  const std::vector<std::string> lines = {
      "k\t0.5",
      "garbage",
      "a\t-1",
      "z\tabc",
      "k\t0.25",
      std::string(kMaxKeyBytes + 1, 'x') + "\t1",
      "k\t#hp1 1 0 5 5 5 - HISTFAAA",
      "k\t#hp9 whatever",
  };
  for (const std::string& line : lines)
    reducer.OnLine(line);
  reducer.OnOverlongLine();
  reducer.Finish();
  EXPECT_EQ(reducer.lines(), 9u);
  EXPECT_EQ(reducer.malformed(), 7u);
  EXPECT_EQ(reducer.first_malformed_line(), 2u);
  EXPECT_EQ(reducer.first_malformed_reason(), "no TAB between key and value");
  EXPECT_TRUE(reducer.sorted());  // malformed "a" and "z" lines do not count as keys
  ASSERT_EQ(Names(collect.keys), std::vector<std::string>{"k"});
  EXPECT_EQ(collect.keys[0].second.count, 2u);
  EXPECT_EQ(collect.keys[0].second.sum_micros, 750000);
}

TEST(ReducerTest, OverflowingFiguresAreMalformed) {
  KeyStats huge;
  huge.RecordSuccess(int64_t{5} << 60);
  std::string partial;
  AppendPartialRecord(partial, "k", huge);
  partial.pop_back();
  uint64_t malformed = 0;
  Keys keys = Reduce({partial, partial, "k\t1", partial}, {}, &malformed);
  EXPECT_EQ(malformed, 2u);
  ASSERT_EQ(keys.size(), 1u);
  EXPECT_EQ(keys[0].second.count, 2u);
  EXPECT_EQ(keys[0].second.sum_micros, (int64_t{5} << 60) + 1000000);
}

TEST(ReducerTest, MixesRawRecordsAndPartials) {
  const std::vector<std::string> raw = {"u\t0.001", "v\t0.002", "u\t", "u\t0.5", "v\t1.0e-05"};
  Keys single = Reduce(raw);
  std::vector<std::string> first = Combine({raw[0], raw[1]});
  std::vector<std::string> mixed = {raw[4], first[1], raw[2], first[0], raw[3]};
  EXPECT_EQ(Reduce(mixed), single);
  EXPECT_EQ(Reduce(Combine(mixed)), single);
}

// A record line in one of the formats mappers write.
std::string RandomRecord(std::mt19937_64& rng, const std::string& key) {
  std::string line;
  switch (rng() % 6) {
    case 0:
      AppendFailureRecord(line, key);
      break;
    case 1: {  // the seed's Ruby floats: shortest form, often with an exponent
      double seconds = std::exp(std::uniform_real_distribution<double>(-14, 6)(rng));
      char buf[64];
      char* end = std::to_chars(buf, buf + sizeof(buf), seconds).ptr;
      line = key + "\t" + std::string(buf, end) + "\n";
      break;
    }
    default: {  // hammer load, µs precision, log-spread
      double micros = std::exp(std::uniform_real_distribution<double>(0, 23)(rng));
      AppendSuccessRecord(line, key, static_cast<int64_t>(micros));
    }
  }
  line.pop_back();
  return line;
}

TEST(ReducerPropertyTest, CombiningRandomSplitsEqualsSinglePass) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE(seed);
    std::mt19937_64 rng(seed);
    std::vector<std::string> keys;
    size_t key_count = 1 + rng() % 40;
    for (size_t i = 0; i < key_count; ++i)
      keys.push_back(i == 0 ? ""
                            : "http://h" + std::to_string(rng() % 5) + "/p/" + std::to_string(i) +
                                  (i % 7 == 0 ? " é" : ""));
    std::vector<std::string> records;
    size_t record_count = rng() % 3000;
    for (size_t i = 0; i < record_count; ++i) {
      if (rng() % 50 == 0) {
        records.push_back(rng() % 2 ? "junk line" : keys[rng() % key_count] + "\t-3");
        continue;
      }
      // Skewed: low keys are hot.
      size_t k = std::min<size_t>(
          key_count - 1, static_cast<size_t>(rng() % key_count * (rng() % key_count)) / key_count);
      records.push_back(RandomRecord(rng, keys[k]));
    }
    uint64_t single_malformed = 0;
    Keys single = Reduce(records, {}, &single_malformed);

    size_t part_count = 1 + rng() % 8;
    std::vector<std::vector<std::string>> parts(part_count);
    for (const std::string& record : records)
      parts[rng() % part_count].push_back(record);
    std::vector<std::string> merged_input;
    for (auto& part : parts) {
      if (rng() % 2) {  // sorted as Hadoop would hand it to a combiner
        std::stable_sort(part.begin(), part.end(), [](const std::string& a, const std::string& b) {
          return a.substr(0, a.find('\t')) < b.substr(0, b.find('\t'));
        });
      }
      std::vector<std::string> out = rng() % 4 == 0 ? part : Combine(part);  // some stay raw
      merged_input.insert(merged_input.end(), out.begin(), out.end());
    }
    if (rng() % 2) std::shuffle(merged_input.begin(), merged_input.end(), rng);

    uint64_t merged_malformed = 0;
    Keys merged = Reduce(merged_input, {}, &merged_malformed);
    ASSERT_EQ(Names(merged), Names(single));
    for (size_t i = 0; i < single.size(); ++i) {
      ASSERT_EQ(merged[i].second, single[i].second) << single[i].first;
    }
    EXPECT_EQ(ReducerOutput(merged), ReducerOutput(single));
    EXPECT_LE(merged_malformed, single_malformed);  // combined parts dropped theirs already
  }
}

TEST(ReducerTest, TimestampedRecordsFeedTheTimeline) {
  constexpr int64_t kT0 = 1764428700000;
  KeyStats partial;
  partial.RecordSuccess(9);
  std::string partial_line;
  AppendPartialRecord(partial_line, "a", partial);
  partial_line.pop_back();
  for (std::optional<std::string> only :
       {std::optional<std::string>(), std::optional<std::string>("b")}) {
    Collect collect;
    Timeline timeline;
    Reducer::Options options;
    options.timeline_key = only;
    Reducer reducer(options, &collect, &timeline);
    for (const std::string& line :
         {std::string("a\t0.001\t1764428700100"), std::string("a\t\t1764428701100"),
          std::string("a\t0.5"), partial_line, std::string("a\t-1\t1764428700100"),
          std::string("b\t0.002\t1764428700200")}) {
      reducer.OnLine(line);
    }
    reducer.Finish();
    ASSERT_EQ(collect.keys.size(), 2u);
    EXPECT_EQ(collect.keys[0].second.total(), 4u);
    EXPECT_EQ(reducer.malformed(), 1u);
    if (!only) {
      EXPECT_EQ(timeline.requests(), 3u);
      EXPECT_EQ(timeline.errors(), 1u);
      ASSERT_EQ(timeline.size(), 2u);
      EXPECT_EQ(timeline.bucket_start_ms(0), kT0);
      EXPECT_EQ(timeline.bucket(0).latency.total_count(), 2u);
    } else {
      EXPECT_EQ(timeline.requests(), 1u);
      EXPECT_EQ(timeline.bucket(0).latency.max(), 2000);
    }
  }
}

// Feeds `input` through a LineReader reading 1000-byte blocks of an in-memory file, which
// offers the reducer its fast path (OnLines).
std::string ReduceThroughReader(const std::string& input, uint64_t* lines, uint64_t* malformed) {
  Collect collect;
  Reducer reducer({}, &collect);
  int fd = memfd_create("reducer_test", MFD_CLOEXEC);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(write(fd, input.data(), input.size()), static_cast<ssize_t>(input.size()));
  EXPECT_EQ(lseek(fd, 0, SEEK_SET), 0);
  LineReader::Options options;
  options.max_line_bytes = kMaxLineBytes;
  options.block_bytes = 1000;
  LineReader reader = LineReader::FromFd(fd, /*owns_fd=*/true, "memfd", options);
  EXPECT_TRUE(reader.ReadAll(reducer).ok());
  reducer.Finish();
  *lines = reducer.lines();
  *malformed = reducer.malformed();
  return ReducerOutput(collect.keys);
}

TEST(ReducerTest, FastPathGivesExactlyWhatOnLineGives) {
  std::mt19937_64 rng(23);
  const std::vector<std::string> odd = {
      "\t0.5",
      "\t1.0e-05",
      "\t0.1234567",
      "\t0.123456\r",
      "\t0.012345\t1764428700000",
      "\t\t17644",
      "\t-1",
      "\t0.12345x",
      "\t1234567890123.000000",
      "\t999999999999.999999",
      "\t.123456",
      "\t0.12345",
      "\t",
      "\t#hp2 x",
      "",
  };
  std::string input;
  std::vector<std::string> lines;
  for (int key = 0; key < 30; ++key) {
    std::string name = "http://h/" + std::to_string(key < 25 ? key : 50 - key);  // late: unsorted
    int n = static_cast<int>(rng() % 300);
    for (int i = 0; i < n; ++i) {
      std::string line = name;
      uint64_t pick = rng() % 20;
      if (pick < 14) {
        int64_t micros = static_cast<int64_t>(rng() % 5'000'000);
        line += "\t";
        AppendSeconds(line, micros);
      } else if (pick < 16) {
        line += "\t";
      } else {
        line += odd[rng() % odd.size()];
      }
      lines.push_back(line);
      input += line + "\n";
    }
  }
  uint64_t fast_lines = 0, fast_malformed = 0;
  std::string fast = ReduceThroughReader(input, &fast_lines, &fast_malformed);
  uint64_t slow_malformed = 0;
  Keys slow_keys = Reduce(lines, {}, &slow_malformed);
  EXPECT_EQ(fast, ReducerOutput(slow_keys));
  EXPECT_EQ(fast_lines, lines.size());
  EXPECT_EQ(fast_malformed, slow_malformed);
}

}  // namespace
}  // namespace hammer::stats
