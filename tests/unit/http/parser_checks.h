// GoogleTest checks over parser_harness.h, shared by response_parser_test.cc and
// request_parser_test.cc: `using Check = harness::ParserChecks<ResponseParser>;`.
#pragma once

#include <gtest/gtest.h>

#include <string_view>

#include "parser_harness.h"

namespace hammer::http::harness {

inline StreamOptions WithLimits(Limits limits) {
  StreamOptions options;
  options.limits = limits;
  return options;
}

template <typename Parser>
struct ParserChecks {
  // Parses a whole stream; the parser must keep every harness invariant.
  static StreamRun Parse(std::string_view stream, StreamOptions options = {}) {
    StreamRun run = RunWhole<Parser>(stream, options);
    EXPECT_EQ(run.violation, "");
    return run;
  }

  // Parses a stream holding exactly one message and returns what was reported for it.
  static RecordedMessage One(std::string_view stream, StreamOptions options = {}) {
    StreamRun run = Parse(stream, options);
    EXPECT_EQ(run.messages.size(), 1u) << run;
    return run.messages.empty() ? RecordedMessage{} : run.messages[0];
  }

  // The error a one-message stream fails with.
  static ParseError ErrorOf(std::string_view stream, StreamOptions options = {}) {
    RecordedMessage m = One(stream, options);
    EXPECT_EQ(m.state, Progress::State::kError) << m;
    return m.error;
  }

  // The sample fed whole, in two pieces at every split point, and one byte at a time must be
  // reported identically: same heads, same concatenated bodies, same outcomes and byte counts.
  static void SplitInvariant(std::string_view sample, StreamOptions options = {}) {
    StreamRun whole = Parse(sample, options);
    ASSERT_FALSE(whole.messages.empty());
    for (size_t at = 0; at <= sample.size(); ++at) {
      ASSERT_EQ(RunSplit<Parser>(sample, at, options), whole) << "split at " << at;
    }
    ASSERT_EQ(RunBytewise<Parser>(sample, options), whole);
  }
};

}  // namespace hammer::http::harness
