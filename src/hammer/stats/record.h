// Records: the line format `hammer load` writes and `hammer stats` reads (Hadoop Streaming
// compatible, identical to the seed mapper's), plus the partial aggregates combiners write.
//
//   KEY<TAB>SECONDS\n   success. hammer writes microsecond precision ("0.012345"); readers also
//                       take what the seed's Ruby mapper prints ("0.123456789", "1.0e-05").
//   KEY<TAB>\n          failure (no time). The failure's type goes to stderr as a Hadoop
//                       counter, not into the record.
//   KEY<TAB>SECONDS<TAB>EPOCH_MS\n
//   KEY<TAB><TAB>EPOCH_MS\n
//                       the same, timestamped (opt-in): EPOCH_MS is when the request ended, in
//                       integer milliseconds since the Unix epoch (1 to 15 digits, nothing else).
//                       Readers use it for throughput and latency over time (timeline.h). The
//                       two-field form stays the default and is the seed's: the seed's Ruby
//                       reducer splits a line at its first TAB only, so it reads the success line
//                       "k<TAB>0.5<TAB>1764428700123" correctly (to_f stops at the TAB) but takes
//                       the failure line "k<TAB><TAB>1764428700123" for a success lasting
//                       1764428700123 seconds (to_f skips the leading TAB).
//   KEY<TAB>#hp1 <count> <errors> <sum_micros> <min_micros> <max_micros> <failures> <histogram>\n
//                       partial aggregate of any number of records of KEY (a combiner's output,
//                       `hammer stats --combine`). Fields are separated by one space:
//                         count, errors  successes and failures, unsigned decimal;
//                         sum_micros     exact sum of the successes' µs;
//                         min/max_micros exact smallest / largest success in µs; both `-`
//                                        when count is 0;
//                         failures       `-`, or `type:n` pairs joined by `,` using the names of
//                                        base/failure.h, in that enum's order, only n > 0 (typed
//                                        failures may be fewer than errors: seed records carry
//                                        no type);
//                         histogram      HdrHistogram V2 compressed, base64 (histogram.h) of
//                                        the successes' µs.
//                       Every figure of KeyStats is carried exactly (integers, and the histogram's
//                       counters), so merging the partials of any split of a record stream gives
//                       KeyStats equal to aggregating the stream in one pass. A reader rejects a
//                       partial whose figures disagree (histogram total != count, min > max,
//                       sum outside [count*min, count*max], typed failures > errors, min or max
//                       outside the histogram's extreme buckets). "#hp1" is the format version:
//                       a future layout gets a new tag; readers reject tags they do not know.
//   KEY<TAB>#ha1 <task> <attempt> <started_ms> <lines> <count> <errors> ... <histogram>\n
//                       the same partial from a worker that knows which task and which attempt
//                       of it it is (`hammer load --emit partials` as a Hadoop task, a
//                       Kubernetes Indexed Job pod, or with HAMMER_TASK; base/worker_identity.h),
//                       so that a reader keeps one attempt of each task (attempt_selector.h):
//                         task, attempt  1-256 bytes, no space, TAB, CR or LF (writers replace
//                                        them with '_');
//                         started_ms     when the attempt started, Unix ms (orders attempts);
//                         lines          how many partial lines the attempt wrote in all (one
//                                        per key), so a reader can tell it has all of them;
//                       then the fields of #hp1 above, with the same rules.
//   (aborted)<TAB>#hab1 TEXT\n
//                       a note, not figures: `hammer load --abort-on-fail --emit partials` ends
//                       its partials with it when a failed threshold aborted the run; TEXT (one
//                       line) says which threshold, its measured value and which worker saw it.
//                       `hammer stats` reports it, passes it on with --combine, and fails its
//                       --threshold verdict on it; it is counted in no key. Readers that predate
//                       it count it as malformed (an unknown tag): it changes no figures.
//
// Keys are bytes up to the first TAB; writers replace TAB, CR and LF in keys with spaces. One
// trailing CR on a line is ignored (Ruby's chomp). Every other line is malformed: no TAB, a key
// over kMaxKeyBytes, a value that is not a finite non-negative decimal number of seconds below
// 1e12 (signs, NaN, inf, hex, spaces and binary bytes included), an unknown or inconsistent
// partial. Readers count malformed lines and never let them change any key's figures.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "hammer/base/failure.h"

namespace hammer::stats {

inline constexpr size_t kMaxKeyBytes = 64 * 1024;
// Longest value a reader accepts: a partial's worst case (a histogram with all 23552 counters
// set, base64) is about 290 KB.
inline constexpr size_t kMaxValueBytes = 512 * 1024;
inline constexpr size_t kMaxLineBytes = kMaxKeyBytes + 1 + kMaxValueBytes;
inline constexpr std::string_view kPartialTag = "#hp1";
// Largest EPOCH_MS a reader accepts (15 digits; the year 33658).
inline constexpr int64_t kMaxEpochMs = 999'999'999'999'999;

// Appends "key\tS.UUUUUU\n" (micros >= 0) to `out`.
void AppendSuccessRecord(std::string& out, std::string_view key, int64_t micros);
// Appends "key\t\n" to `out`.
void AppendFailureRecord(std::string& out, std::string_view key);
// The same with the request's end time when `epoch_ms` is set ("key\tS.UUUUUU\tEPOCH_MS\n",
// "key\t\tEPOCH_MS\n"); without it, exactly the two-field forms above. A negative epoch_ms is
// written as 0.
void AppendSuccessRecord(std::string& out, std::string_view key, int64_t micros,
                         std::optional<int64_t> epoch_ms);
void AppendFailureRecord(std::string& out, std::string_view key, std::optional<int64_t> epoch_ms);
// The typed form (`hammer load --failure-types`): the failure's type as a third column,
// "key\t\tTYPE\n", or "key\t\tEPOCH_MS\tTYPE\n" with a time. `hammer stats` counts it by type.
// The seed's Ruby reducer reads these lines without error but takes a typed failure for a
// 0-second success (its only failure test is an empty second column): hence opt-in.
void AppendFailureRecord(std::string& out, std::string_view key, std::optional<int64_t> epoch_ms,
                         std::optional<Failure> type);
// Appends `key` with TAB, CR and LF replaced by spaces.
void AppendSanitizedKey(std::string& out, std::string_view key);
// Appends µs as seconds with exactly six decimals ("0.012345", "-1.500000").
void AppendSeconds(std::string& out, int64_t micros);

// Who wrote a #ha1 partial: views into the parsed line (or the writer's strings).
struct PartialOrigin {
  std::string_view task;
  std::string_view attempt;
  int64_t started_ms = 0;
  uint64_t lines = 0;
};
inline constexpr std::string_view kAttemptPartialTag = "#ha1";
inline constexpr size_t kMaxOriginFieldBytes = 256;

// The abort note: "(aborted)\t#hab1 TEXT\n" (TAB, CR and LF in TEXT become spaces).
inline constexpr std::string_view kAbortNoteKey = "(aborted)";
inline constexpr std::string_view kAbortNoteTag = "#hab1";
void AppendAbortNote(std::string& out, std::string_view text);
// True when `line` (without its '\n') is an abort note; `*text` then views its TEXT.
bool ParseAbortNote(std::string_view line, std::string_view* text);

enum class RecordKind : uint8_t { kSuccess, kFailure, kPartial, kMalformed };

// One parsed line. Views point into the parsed line.
struct ParsedRecord {
  RecordKind kind = RecordKind::kMalformed;
  std::string_view key;
  int64_t micros = 0;              // kSuccess
  bool has_epoch_ms = false;       // kSuccess and kFailure: the record carried EPOCH_MS
  std::optional<Failure> failure;  // kFailure: the typed form's TYPE
  int64_t epoch_ms = 0;
  std::string_view partial;  // kPartial: the fields after "#hp1 " (or after #ha1's origin)
  std::optional<PartialOrigin> origin;  // kPartial written as #ha1
  const char* error = "";               // kMalformed: why, for diagnostics
};

// Parses one line (without its '\n'). Never fails: a bad line comes back as kMalformed.
ParsedRecord ParseRecordLine(std::string_view line);

// Seconds text to µs, rounded to the nearest µs with halves up (llround). Plain decimals
// ("0.012345", "0.123456789") are converted exactly from their digits; exponent forms
// ("1.0e-05") go through a double. False unless `text` is a finite, non-negative decimal
// number below 1e12 with nothing around it.
bool ParseSeconds(std::string_view text, int64_t* micros);

}  // namespace hammer::stats
