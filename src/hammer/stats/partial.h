// Partial aggregates: one KeyStats as a record line, "KEY<TAB>#hp1 ...". The format and its
// consistency rules are specified in record.h; this file writes and reads it.
#pragma once

#include <string>
#include <string_view>

#include "hammer/base/status.h"
#include "hammer/stats/key_stats.h"

namespace hammer::stats {

// Appends "KEY\t#hp1 <count> <errors> <sum> <min> <max> <failures> <histogram>\n" to `out`.
void AppendPartialRecord(std::string& out, std::string_view key, const KeyStats& stats);

// Parses the fields after "#hp1 " (ParsedRecord::partial). On error `out` is unspecified and
// the message says which field is wrong.
Status ParsePartialFields(std::string_view fields, KeyStats* out);

// Appends the failures field: "-" or "timeout:3,http_5xx:1".
void AppendFailureCounts(std::string& out, const FailureCounts& failures);

}  // namespace hammer::stats
