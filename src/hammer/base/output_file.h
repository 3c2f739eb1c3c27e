// Output flags (`--summary-json FILE`, `--html FILE`, `--hdr-log FILE`, ...): every command
// reads "-" as standard output, as curl, vegeta and k6 do, and anything else as a path that is
// created or truncated.
//
// Errors name the flag and the path: "--html: cannot write 'out/r.html': No such file or
// directory". Standard output is flushed but never closed. Threads: reentrant.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "hammer/base/status.h"

namespace hammer {

inline constexpr std::string_view kStdoutPath = "-";

// Writes `content` to `path` ("-": standard output). `flag` names the option in errors.
Status WriteOutputFile(std::string_view flag, const std::string& path, std::string_view content);

// Writes a piece of an output; an error ends the output.
using OutputPieces = std::function<Status(std::string_view piece)>;

// Writes to `path` what `produce` hands to the writer it is given, piece by piece: an output
// of megabytes goes out as it is made instead of first filling fresh memory whole. Errors as
// WriteOutputFile's; the first failed write ends `produce` (which returns that error).
Status WriteOutputFile(std::string_view flag, const std::string& path,
                       const std::function<Status(const OutputPieces& write)>& produce);

// Opens `path` for writing ("-": a duplicate of standard output, so the caller closes what it
// gets either way). Returns the descriptor.
Result<int> OpenOutputFile(std::string_view flag, const std::string& path);

}  // namespace hammer
