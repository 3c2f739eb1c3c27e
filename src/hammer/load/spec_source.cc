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
                                                     const SpecOptions& options) {
  if (options.loop && path == "-" && format != TargetsFormat::kHar) {
    return Status::Error("--loop needs a file, not standard input, for this targets format");
  }
  std::unique_ptr<SpecSource> source(new SpecSource(path, format, options));
  if (format == TargetsFormat::kHar) {
    Result<HarReadResult> har = ReadHar(path);
    if (!har.ok()) return har.status();
    source->har_ = std::move(*har);
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
  file_ended_ = false;
  return Status::Ok();
}

Result<bool> SpecSource::NextRead(RequestSpec* out) {
  if (format_ == TargetsFormat::kHar) {
    if (har_next_ == har_.requests.size()) return false;
    *out = har_.requests[har_next_++];
    return true;
  }
  return format_ == TargetsFormat::kVegeta ? vegeta_->Next(out) : jsonl_->Next(out);
}

Result<bool> SpecSource::NextInArrival(RequestSpec* out) {
  while (!file_ended_ && window_.size() < kReorderWindow) {
    Pending pending;
    Result<bool> got = jsonl_->Next(&pending.spec);
    if (!got.ok()) return got.status();
    if (!*got) {
      file_ended_ = true;
      break;
    }
    if (pending.spec.timestamp_us < 0) {
      return Status::Error(pending.spec.where +
                           ": --replay needs every entry's 'ts' (Unix microseconds, as "
                           "`hammer dark --capture` writes it)");
    }
    pending.order = read_order_++;
    window_.push(std::move(pending));
  }
  if (window_.empty()) return false;
  // top() is const; the entry is moved out (its ts and order, which pop compares, stay).
  *out = std::move(const_cast<Pending&>(window_.top()).spec);
  window_.pop();
  return true;
}

void SpecSource::Schedule(RequestSpec* out) {
  if (!options_.timed) return;
  Nanos offset = out->offset;
  if (format_ == TargetsFormat::kJsonl) {
    if (pass_first_us_ < 0) pass_first_us_ = out->timestamp_us;
    offset = (out->timestamp_us - pass_first_us_) * kMicrosecond;
  }
  // An entry that arrived before the pass's first (beyond the reorder window) is late: sent at
  // once.
  offset = std::max<Nanos>(0, offset);
  offset = static_cast<Nanos>(static_cast<double>(offset) / options_.speed);
  pass_span_ = std::max(pass_span_, offset);
  out->offset = pass_offset_ + offset;
}

Result<bool> SpecSource::NextOne(RequestSpec* out) {
  while (true) {
    Result<bool> got =
        format_ == TargetsFormat::kJsonl && options_.timed ? NextInArrival(out) : NextRead(out);
    if (!got.ok() || !*got) return got;
    if (out->body_truncated && !options_.send_truncated) {
      ++skipped_["body truncated when captured (--replay-truncated sends it)"];
      continue;
    }
    if (options_.base_url) options_.base_url->Apply(out, options_.preserve_host);
    Schedule(out);
    return true;
  }
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
    if (!options_.loop || read_this_pass_ == 0) {
      done_ = true;
      break;
    }
    read_this_pass_ = 0;
    // The next pass starts just after this one's last request.
    pass_offset_ += pass_span_ + kMillisecond;
    pass_span_ = 0;
    pass_first_us_ = -1;
    if (format_ == TargetsFormat::kHar) {
      har_next_ = 0;
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
  std::map<std::string, uint64_t> all = har_.skipped;
  for (const auto& [reason, count] : skipped_)
    all[reason] += count;
  return all;
}

uint64_t SpecSource::read() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return read_;
}

}  // namespace hammer::load
