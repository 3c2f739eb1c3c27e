#include "hammer/http/body_decoder.h"

#include <algorithm>
#include <cstring>

#include "hammer/http/head_scanner.h"

namespace hammer::http::internal {
namespace {

// A complete line found by ReadLine.
struct LineRead {
  size_t length = 0;      // bytes including the line ending; 0 while the line is incomplete
  std::string_view line;  // without its line ending
  bool too_long = false;  // the line (line ending excluded) exceeds the cap
};

// Reads the line at the start of `input`. `*scanned` carries how far an earlier call on the
// same line searched, and is reset when the line is complete. Searches at most
// max_line_bytes + 2 bytes (room for the CRLF), so an endless line is caught early.
LineRead ReadLine(std::string_view input, size_t max_line_bytes, size_t* scanned) {
  LineRead read;
  size_t cap = max_line_bytes > SIZE_MAX - 2 ? SIZE_MAX : max_line_bytes + 2;
  size_t window = std::min(input.size(), cap);
  const void* found = nullptr;
  if (*scanned < window) found = std::memchr(input.data() + *scanned, '\n', window - *scanned);
  if (found == nullptr) {
    *scanned = window;
    size_t pending = window;
    if (pending > 0 && input[pending - 1] == '\r') --pending;  // may be the CR of a CRLF
    read.too_long = pending > max_line_bytes;
    return read;
  }
  size_t nl = static_cast<size_t>(static_cast<const char*>(found) - input.data());
  *scanned = 0;
  read.length = nl + 1;
  read.line = input.substr(0, nl);
  if (!read.line.empty() && read.line.back() == '\r') read.line.remove_suffix(1);
  read.too_long = read.line.size() > max_line_bytes;
  return read;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// chunk-size [ BWS ";" chunk-ext ] (RFC 9112 §7.1.1). Extensions are ignored but must not
// hold control characters. Overflow is an error, not a wrap-around.
bool ParseChunkSize(std::string_view line, uint64_t* size) {
  uint64_t value = 0;
  size_t i = 0;
  for (; i < line.size(); ++i) {
    int digit = HexValue(line[i]);
    if (digit < 0) break;
    if (value > (UINT64_MAX >> 4)) return false;
    value = (value << 4) | static_cast<uint64_t>(digit);
  }
  if (i == 0) return false;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t'))
    ++i;
  if (i < line.size() && (line[i] != ';' || !IsFieldText(line.substr(i + 1)))) return false;
  *size = value;
  return true;
}

}  // namespace

ParseError BodyDecoder::Start(BodyFraming framing, uint64_t content_length) {
  framing_ = framing;
  remaining_ = 0;
  body_bytes_ = 0;
  line_scanned_ = 0;
  trailer_bytes_ = 0;
  trailers_ = 0;
  switch (framing) {
    case BodyFraming::kNone:
      phase_ = Phase::kDone;
      break;
    case BodyFraming::kContentLength:
      if (content_length > max_body_bytes_) {
        phase_ = Phase::kDone;
        return ParseError::kBodyTooLarge;
      }
      remaining_ = content_length;
      phase_ = content_length == 0 ? Phase::kDone : Phase::kLength;
      break;
    case BodyFraming::kChunked:
      phase_ = Phase::kChunkSize;
      break;
    case BodyFraming::kUntilClose:
      phase_ = Phase::kUntilClose;
      break;
  }
  return ParseError::kNone;
}

BodyDecoder::Step BodyDecoder::Next(std::string_view input) {
  size_t offset = 0;
  while (true) {
    switch (phase_) {
      case Phase::kDone:
        return {offset, {}, ParseError::kNone};
      case Phase::kLength:
      case Phase::kUntilClose:
      case Phase::kChunkData:
        return TakeData(input, offset);
      case Phase::kChunkSize: {
        LineRead read = ReadLine(input.substr(offset), max_line_bytes_, &line_scanned_);
        if (read.too_long) return {offset, {}, ParseError::kChunkLineTooLong};
        if (read.length == 0) return {offset, {}, ParseError::kNone};
        uint64_t size = 0;
        if (!ParseChunkSize(read.line, &size)) return {offset, {}, ParseError::kBadChunk};
        // Refused before any byte of the chunk is delivered.
        if (size > max_body_bytes_ - body_bytes_) return {offset, {}, ParseError::kBodyTooLarge};
        offset += read.length;
        remaining_ = size;
        phase_ = size == 0 ? Phase::kTrailers : Phase::kChunkData;
        break;
      }
      case Phase::kChunkDataEnd: {
        std::string_view rest = input.substr(offset);
        if (rest.empty() || rest == "\r") return {offset, {}, ParseError::kNone};
        size_t ending = rest[0] == '\n' ? 1 : (rest[0] == '\r' && rest[1] == '\n') ? 2 : 0;
        if (ending == 0) return {offset, {}, ParseError::kBadChunk};
        offset += ending;
        phase_ = Phase::kChunkSize;
        break;
      }
      case Phase::kTrailers: {
        LineRead read = ReadLine(input.substr(offset), max_line_bytes_, &line_scanned_);
        if (read.too_long) return {offset, {}, ParseError::kChunkLineTooLong};
        if (read.length == 0) return {offset, {}, ParseError::kNone};
        offset += read.length;
        if (read.line.empty()) {
          phase_ = Phase::kDone;
          return {offset, {}, ParseError::kNone};
        }
        Step step{offset, {}, ParseError::kNone, {}};
        if (!ParseFieldLine(read.line, &step.trailer)) {
          return {offset - read.length, {}, ParseError::kBadHeader};
        }
        trailer_bytes_ += read.length;
        if (trailer_bytes_ > max_trailer_bytes_) {
          return {offset - read.length, {}, ParseError::kHeadTooLarge};
        }
        if (++trailers_ > max_trailers_) {
          return {offset - read.length, {}, ParseError::kTooManyHeaders};
        }
        return step;
      }
    }
  }
}

BodyDecoder::Step BodyDecoder::TakeData(std::string_view input, size_t offset) {
  uint64_t available = input.size() - offset;
  uint64_t n = phase_ == Phase::kUntilClose ? available : std::min(remaining_, available);
  ParseError error = ParseError::kNone;
  if (n > max_body_bytes_ - body_bytes_) {
    // Only a close-delimited body gets here (the other framings are checked up front).
    // Deliver exactly up to the cap so the outcome does not depend on how input was split.
    n = max_body_bytes_ - body_bytes_;
    error = ParseError::kBodyTooLarge;
  }
  body_bytes_ += n;
  if (phase_ != Phase::kUntilClose) {
    remaining_ -= n;
    if (remaining_ == 0) phase_ = phase_ == Phase::kLength ? Phase::kDone : Phase::kChunkDataEnd;
  }
  size_t length = static_cast<size_t>(n);
  return {offset + length, input.substr(offset, length), error};
}

}  // namespace hammer::http::internal
