// Output flags (`--summary-json FILE`, `--html FILE`, `--hdr-log FILE`, ...): every command
// reads "-" as standard output, as curl, vegeta and k6 do, and anything else as a path that is
// created, or truncated to nothing when it is opened (O_TRUNC): a file never holds bytes of an
// earlier output after the new one's, however the new one ends.
//
// Errors name the flag and the path: "--html: cannot write 'out/r.html': No such file or
// directory". Standard output is flushed but never closed. Threads: reentrant.
#pragma once

#include <string>
#include <string_view>

#include "hammer/base/status.h"

namespace hammer {

inline constexpr std::string_view kStdoutPath = "-";

// Writes `content` to `path` ("-": standard output). `flag` names the option in errors.
Status WriteOutputFile(std::string_view flag, const std::string& path, std::string_view content);

// Opens `path` for writing ("-": a duplicate of standard output, so the caller closes what it
// gets either way). Returns the descriptor.
Result<int> OpenOutputFile(std::string_view flag, const std::string& path);

}  // namespace hammer
