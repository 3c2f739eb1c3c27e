// Output flags (`--summary-json FILE`, `--html FILE`, `--hdr-log FILE`, ...): every command
// reads "-" as standard output, as curl, vegeta and k6 do, and anything else as a path that is
// created or truncated.
//
// Errors name the flag and the path: "--html: cannot write 'out/r.html': No such file or
// directory". Standard output is flushed but never closed. Threads: reentrant.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "hammer/base/status.h"

namespace hammer {

inline constexpr std::string_view kStdoutPath = "-";

// Writes `content` to `path` ("-": standard output). `flag` names the option in errors.
Status WriteOutputFile(std::string_view flag, const std::string& path, std::string_view content);

// Writes pieces of an output, in order; an error ends the output. Pieces handed over together
// go out in one writev(2): a file takes its page cache in larger blocks that way (3.5 MB in
// 45 KB pieces into a new ext4 file here: 2.4 ms one piece a call, 1.8 ms six a call).
class OutputPieces {
 public:
  using Write = std::function<Status(std::span<const std::string_view> pieces)>;
  explicit OutputPieces(Write write) : write_(std::move(write)) {}

  Status operator()(std::span<const std::string_view> pieces) const { return write_(pieces); }
  Status operator()(std::string_view piece) const { return write_({&piece, 1}); }

 private:
  Write write_;
};

// Writes to `path` what `produce` hands to the writer it is given, piece by piece: an output
// of megabytes goes out as it is made instead of first filling fresh memory whole. Errors as
// WriteOutputFile's; the first failed write ends `produce` (which returns that error).
//
// A regular file that exists is written over from its start and then cut to the new length,
// not truncated to zero when opened: on ext4 (auto_da_alloc, the kernel's ext4 documentation)
// a file truncated to zero and rewritten has its new blocks written out when it is closed, a
// guard for programs that replace files without fsync(2) that took 0.3-4.5 ms at close for a
// 3.5 MB summary here. The file ends with the same bytes either way.
Status WriteOutputFile(std::string_view flag, const std::string& path,
                       const std::function<Status(const OutputPieces& write)>& produce);

// Opens `path` for writing ("-": a duplicate of standard output, so the caller closes what it
// gets either way). Returns the descriptor.
Result<int> OpenOutputFile(std::string_view flag, const std::string& path);

}  // namespace hammer
