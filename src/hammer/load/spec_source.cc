#include "hammer/load/spec_source.h"

#include <algorithm>

namespace hammer::load {

Result<TargetsFormat> ParseTargetsFormat(std::string_view text) {
  if (text == "lines") return TargetsFormat::kLines;
  if (text == "vegeta") return TargetsFormat::kVegeta;
  if (text == "jsonl") return TargetsFormat::kJsonl;
  if (text == "har") return TargetsFormat::kHar;
  return Status::Error("unknown targets format '" + std::string(text) +
                       "' (expected lines, vegeta, jsonl or har)");
}

Result<std::unique_ptr<SpecSource>> SpecSource::Open(const std::string& path, TargetsFormat format,
                                                     bool loop) {
  if (loop && path == "-" && format != TargetsFormat::kHar) {
    return Status::Error("--loop needs a file, not standard input, for this targets format");
  }
  std::unique_ptr<SpecSource> source(new SpecSource(path, format, loop));
  if (format == TargetsFormat::kHar) {
    Result<HarReadResult> har = ReadHar(path);
    if (!har.ok()) return har.status();
    source->har_ = std::move(*har);
    for (const RequestSpec& r : source->har_.requests) {
      source->har_span_ = std::max(source->har_span_, r.offset);
    }
    source->har_span_ += kMillisecond;  // the next pass starts just after the last request
    return source;
  }
  if (Status s = source->Reopen(); !s.ok()) return s;
  return source;
}

Status SpecSource::Reopen() {
  if (format_ == TargetsFormat::kVegeta) {
    VegetaTargetOptions options;
    options.interrupt = &interrupted_;
    Result<VegetaTargetReader> reader = VegetaTargetReader::Open(path_, options);
    if (!reader.ok()) return reader.status();
    vegeta_.emplace(std::move(*reader));
  } else {
    JsonTargetOptions options;
    options.interrupt = &interrupted_;
    Result<JsonTargetReader> reader = JsonTargetReader::Open(path_, options);
    if (!reader.ok()) return reader.status();
    jsonl_.emplace(std::move(*reader));
  }
  return Status::Ok();
}

Result<bool> SpecSource::NextOne(RequestSpec* out) {
  if (format_ == TargetsFormat::kHar) {
    if (har_next_ == har_.requests.size()) return false;
    *out = har_.requests[har_next_++];
    if (out->offset >= 0) out->offset += har_pass_offset_;
    return true;
  }
  return format_ == TargetsFormat::kVegeta ? vegeta_->Next(out) : jsonl_->Next(out);
}

bool SpecSource::NextBatch(std::vector<RequestSpec>& out, size_t max) {
  std::lock_guard<std::mutex> lock(mutex_);
  out.resize(max);
  size_t n = 0;
  while (n < max && !done_) {
    Result<bool> got = NextOne(&out[n]);
    if (!got.ok()) {
      // A signal ended the input: what was read is sent, nothing is malformed.
      if (!interrupted_.load()) error_ = got.status();
      done_ = true;
      break;
    }
    if (*got) {
      ++n;
      ++read_;
      ++read_this_pass_;
      continue;
    }
    // End of a pass: loop again only if the pass produced something.
    if (!loop_ || read_this_pass_ == 0) {
      done_ = true;
      break;
    }
    read_this_pass_ = 0;
    if (format_ == TargetsFormat::kHar) {
      har_next_ = 0;
      har_pass_offset_ += har_span_;
    } else if (Status s = Reopen(); !s.ok()) {
      error_ = s;
      done_ = true;
    }
  }
  out.resize(n);
  return n > 0;
}

std::optional<Status> SpecSource::error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

std::map<std::string, uint64_t> SpecSource::skipped() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return har_.skipped;
}

uint64_t SpecSource::read() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return read_;
}

}  // namespace hammer::load
