// OneRequestRowsHint: what a summary says of key rows that hold one request each.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "hammer/stats/key_stats.h"

namespace hammer::stats {

// A sentence for summaries when at least kOneRequestHintRows rows, and 9 in 10 of them, hold one
// request each, most often a URL list where each URL is sent once: a row of one sample has no
// percentiles worth reading, and each row costs CPU and memory (`hammer load` over 10,000 URLs
// sent once took 1.22-1.25x the CPU of one URL with a row each, 1.04-1.08x with one row for
// all), so the sentence says how to group them, e.g. "9990 of the 10000 keys had one request
// each: group them into fewer rows with --key-pattern REGEX=NAME, or by path template with
// --max-keys below 10000" ("each of the 10000 keys had one request: ..." when all did); empty
// otherwise. "(other)" is not counted. Meant for an unfolded table's rows: a folded table's rows
// are templates already, and its summary says so (KeyFolding::Describe).
inline constexpr size_t kOneRequestHintRows = 100;
std::string OneRequestRowsHint(std::span<const std::pair<std::string, KeyStats>> rows);
// The same from counts, for callers that see the rows one at a time (`hammer stats` streams
// them): `keys` rows besides "(other)", `one_request` of which hold one request.
std::string OneRequestRowsHint(uint64_t keys, uint64_t one_request);

struct KeyFolding;
// The HTML report's note on the key rows: the folding sentence when `folding` folded, e.g.
// "About 1000000 distinct keys exceeded ... (raise --max-keys for more rows).", else
// `one_request_hint` as a sentence; empty when neither has anything to say.
std::string KeyRowsNote(const KeyFolding& folding, std::string_view one_request_hint);

}  // namespace hammer::stats
