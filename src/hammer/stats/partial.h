// Partial aggregates: one KeyStats as a record line, "KEY<TAB>#hp1 ...". The format and its
// consistency rules are specified in record.h; this file writes and reads it.
#pragma once

#include <string>
#include <string_view>

#include "hammer/base/status.h"
#include "hammer/stats/key_stats.h"
#include "hammer/stats/record.h"

namespace hammer::stats {

// Appends "KEY\t#hp1 <count> <errors> <sum> <min> <max> <failures> <histogram>\n" to `out`.
void AppendPartialRecord(std::string& out, std::string_view key, const KeyStats& stats);
// Appends the same partial with its origin: "KEY\t#ha1 <task> <attempt> <started_ms> <lines>
// <count> ...\n". Task and attempt longer than kMaxOriginFieldBytes are cut; their spaces and
// bytes up to CR become '_' ("-" for an empty one).
void AppendPartialRecord(std::string& out, std::string_view key, const KeyStats& stats,
                         const PartialOrigin& origin);

// Parses the fields after "#hp1 " (ParsedRecord::partial). On error `out` is unspecified and
// the message says which field is wrong.
Status ParsePartialFields(std::string_view fields, KeyStats* out);

// Appends the failures field: "-" or "timeout:3,http_5xx:1".
void AppendFailureCounts(std::string& out, const FailureCounts& failures);

}  // namespace hammer::stats
