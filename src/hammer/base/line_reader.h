// LineReader: the lines of a file, a pipe or text in memory, in bounded memory. hammer's one
// line reader: URL lists (load::TargetSource), request files (vegeta and JSON-lines targets),
// record streams (`hammer stats`) and NDJSON bulk input (`hammer route`, `hammer bulk`).
//
// Reads Options::block_bytes at a time and hands out each line without its '\n' (and, with
// strip_cr, without one '\r' before it) as a view into its buffer, valid until the next call.
// The last line may lack its '\n'. Lines are numbered from 1.
//
// A line longer than max_line_bytes is never buffered whole, so memory stays below
// max_line_bytes + block_bytes + 2 whatever the input. What happens to such a line is the
// caller's choice: by default it is handed out cut to its first max_line_bytes bytes with
// Line::overlong set, and the rest of it is skipped; with overlong_is_error it is an error
// ("<name>:<line>: line longer than <max> bytes") and the reader is at its end.
//
// zstd: an input that begins with a zstd frame (RFC 8878 §3.1.1, by its magic number, whatever
// its name) is decoded as it is read (zstd_frames.h), so a `.jsonl.zst` capture reads like its
// `.jsonl`. An input cut inside its last frame (a writer killed mid-write) is read up to its
// last complete line; the rest is dropped and cut_short() says so. Corrupt input is a read
// error ("read <name>: zstd: <reason>").
//
// Errors: open(2) ("open <path>: <strerror>") and read(2) ("read <name>: <strerror>"); after an
// error the reader is at its end. Owns its file descriptor when told so (standard input is never
// closed). Movable, not copyable; not thread-safe (one reader per input; a reader shared by
// threads needs the caller's lock, as TargetSource has).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "hammer/base/status.h"

namespace hammer {

class ZstdStreamDecoder;

// Receives lines pushed by LineReader::ReadAll.
class LineHandler {
 public:
  virtual ~LineHandler() = default;
  virtual void OnLine(std::string_view line) = 0;
  virtual void OnOverlongLine() = 0;
  // Optional fast path for handlers that can take many lines at once. `lines` holds one or more
  // complete lines, each with its '\n', starting at a line start. The handler takes a prefix of
  // whole lines (as if each had gone to OnLine) and returns its length in bytes: 0, or just
  // past one of the '\n's. The reader hands the next line to OnLine and offers the rest again.
  // Lines taken here skip the reader's max_line_bytes check (take only lines OnLine accepts),
  // its strip_cr and its line count.
  virtual size_t OnLines(std::string_view /*lines*/) { return 0; }
};

class LineReader {
 public:
  struct Options {
    size_t max_line_bytes = 64 * 1024;
    size_t block_bytes = 64 * 1024;  // bytes asked of each read(2), at least
    bool strip_cr = false;           // drop one '\r' before '\n' (CRLF files)
    bool overlong_is_error = false;  // else overlong lines are cut (Line::overlong)
    // When set, reads wait for input in short slices and, once *interrupt is true, end with
    // the error "read <name>: interrupted": a signal handled on another thread can stop a
    // reader blocked on an idle pipe or a terminal, or one skipping an endless line
    // (/dev/zero). Not owned; must outlive the reader.
    const std::atomic<bool>* interrupt = nullptr;
  };

  // The options of inputs read record by record (request files, NDJSON documents): a CRLF line
  // end is accepted and an overlong line is an error.
  static Options WholeLines(size_t max_line_bytes) {
    return Options{max_line_bytes, 64 * 1024, true, true};
  }

  struct Line {
    std::string_view text;
    bool overlong = false;  // longer than max_line_bytes: text is its beginning only
  };

  // `path` "-" is standard input, named "stdin" in messages.
  static Result<LineReader> Open(const std::string& path, const Options& options);
  // Reads `fd` (closed with the reader when `owns_fd`); `name` is used in messages.
  static LineReader FromFd(int fd, bool owns_fd, std::string name, const Options& options);
  // The lines of text already in memory (tests, fuzzing, inputs made by the program).
  static LineReader FromString(std::string text, std::string name, const Options& options);

  LineReader(LineReader&& other) noexcept;
  LineReader& operator=(LineReader&& other) noexcept;
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;
  ~LineReader();

  // Sets *line to the next line and returns true; false at the end.
  Result<bool> Next(Line* line);
  // The same for readers with overlong_is_error, where every line is whole.
  Result<bool> Next(std::string_view* line);

  // What TryNext found.
  enum class Poll : uint8_t { kLine, kNotYet, kEnd };
  // As Next, but never waits for input: kNotYet when the next line has not arrived whole yet
  // from a pipe, a terminal or a socket that is open but idle (the bytes that did arrive are
  // kept for the next call). Text in memory and regular files never answer kNotYet.
  Result<Poll> TryNext(Line* line);
  // Waits until the input has bytes to read or has ended, at most `timeout_millis` (-1: no
  // limit): for a caller of TryNext with nothing else to do. At once for text in memory.
  void AwaitInput(int timeout_millis) const;

  // Reads to the end, handing every line to `handler` (overlong ones to OnOverlongLine), and
  // offering the complete lines in the buffer to its OnLines fast path at each line start.
  Status ReadAll(LineHandler& handler);

  // Starts again at the first line: always for text in memory, for a descriptor only when it
  // is a regular file (lseek). False, changing nothing, when that is not possible.
  bool Rewind();

  // From now on keeps a copy of the bytes read, as long as they total at most max_bytes (a pipe
  // read once can then be replayed). TakeCopy moves it out: nullopt when the input was larger.
  void KeepCopy(size_t max_bytes);
  std::optional<std::string> TakeCopy();

  // Empty, or a note for the operator once the input has ended: a zstd input was cut short
  // and its incomplete last line dropped.
  std::string cut_short() const;

  uint64_t line_number() const { return line_number_; }  // of the line last handed out
  // Whether the line last handed out ended at the end of the input without its '\n': the
  // whole of a last line written without one, or the part of a line a writer killed mid-write
  // (kill -9 can cut a write(2) to a regular file at a page boundary) left behind.
  bool last_unterminated() const { return last_unterminated_; }
  const std::string& name() const { return name_; }
  size_t max_line_bytes() const { return options_.max_line_bytes; }

 private:
  enum class Step : uint8_t { kLine, kNotYet, kEnd, kError };
  enum class Encoding : uint8_t { kSniffing, kPlain, kZstd };

  LineReader(int fd, bool owns_fd, std::string name, const Options& options);
  // `wait`: false answers kNotYet rather than wait for input (TryNext).
  Step NextLine(Line* line, bool wait = true);
  bool ReadableNow() const;   // bytes (or the end, or an error) to read without waiting
  bool WaitReadable() const;  // false once options_.interrupt is set
  Status Fill();        // compacts, then reads one more block; sets eof_ at the end of the input
  void Took(size_t n);  // n more bytes are in buffer_ at end_
  Status Failed(Status error);  // at the end, empty, returning `error`
  void Close();

  int fd_ = -1;
  bool owns_fd_ = false;
  bool seekable_ = false;
  bool in_memory_ = false;  // FromString: the whole input is in buffer_
  std::string name_;
  Options options_;
  std::string buffer_;
  size_t begin_ = 0;       // start of the next line in buffer_
  size_t scanned_ = 0;     // buffer_[begin_, scanned_) holds no '\n'
  size_t end_ = 0;         // end of the bytes read
  size_t complete_ = 0;    // just past the last '\n' in buffer_[0, end_), 0 if none
  bool eof_ = false;       // no more bytes to read (text in memory: always)
  bool skipping_ = false;  // inside an overlong line: dropping bytes up to its '\n'
  uint64_t line_number_ = 0;
  bool last_unterminated_ = false;
  Status error_;  // why NextLine returned kError
  bool keep_copy_ = false;
  size_t copy_limit_ = 0;
  std::optional<std::string> copy_;
  // Until its first bytes are read, an input's encoding is unknown (kSniffing). A zstd input is
  // read into raw_ and decoded into buffer_.
  Encoding encoding_ = Encoding::kSniffing;
  std::string raw_;
  size_t raw_begin_ = 0;  // raw_[raw_begin_, size) is not yet decoded
  std::unique_ptr<ZstdStreamDecoder> zstd_;
  bool decoder_full_ = false;  // the last decode filled buffer_: more may wait in the decoder
  bool cut_short_ = false;
};

}  // namespace hammer
