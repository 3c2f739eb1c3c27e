// Records: the line format `hammer load` writes and `hammer stats` reads (Hadoop Streaming
// compatible, identical to the seed mapper's):
//   KEY<TAB>SECONDS\n   success; SECONDS with microsecond precision ("0.012345")
//   KEY<TAB>\n          failure
// Keys never contain TAB or newline: writers replace them with spaces.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace hammer {

// Appends "key\tS.UUUUUU\n" (micros >= 0) to `out`.
void AppendSuccessRecord(std::string& out, std::string_view key, int64_t micros);
// Appends "key\t\n" to `out`.
void AppendFailureRecord(std::string& out, std::string_view key);
// Appends `key` with TAB, CR and LF replaced by spaces.
void AppendSanitizedKey(std::string& out, std::string_view key);

}  // namespace hammer
