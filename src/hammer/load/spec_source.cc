#include "hammer/load/spec_source.h"

#include <algorithm>

namespace hammer::load {

Result<TargetsFormat> ParseTargetsFormat(std::string_view text) {
  if (text == "lines") return TargetsFormat::kLines;
  if (text == "vegeta") return TargetsFormat::kVegeta;
  if (text == "jsonl") return TargetsFormat::kJsonl;
  if (text == "har") return TargetsFormat::kHar;
  if (text == "access-log") return TargetsFormat::kAccessLog;
  return Status::Error("unknown targets format '" + std::string(text) +
                       "' (expected lines, vegeta, jsonl, access-log or har)");
}

Result<std::unique_ptr<SpecSource>> SpecSource::Open(const std::string& path, TargetsFormat format,
                                                     const SpecOptions& options) {
  if (options.loop && path == "-" && format != TargetsFormat::kHar) {
    return Status::Error("--loop needs a file, not standard input, for this targets format");
  }
  if (format == TargetsFormat::kAccessLog && !options.base_url) {
    return Status::Error(
        "--targets-format access-log needs --base-url scheme://host[:port]: a log line holds "
        "the path, not the scheme, host or port it was served on");
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
  } else if (format_ == TargetsFormat::kAccessLog) {
    AccessLogOptions options;
    options.interrupt = &interrupted_;
    Result<AccessLogReader> reader =
        AccessLogReader::Open(path_, options_.base_url->origin(), options);
    if (!reader.ok()) return reader.status();
    if (access_log_) {
      for (const auto& [reason, count] : access_log_->skipped())
        skipped_[reason] += count;
    }
    access_log_.emplace(std::move(*reader));
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
  switch (format_) {
    case TargetsFormat::kVegeta:
      return vegeta_->Next(out);
    case TargetsFormat::kAccessLog:
      return access_log_->Next(out);
    default:
      return jsonl_->Next(out);
  }
}

Status SpecSource::FillWindow() {
  while (!file_ended_ && window_.size() < kReorderWindow) {
    Pending pending;
    Result<bool> got = NextRead(&pending.spec);
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
  return Status::Ok();
}

Result<bool> SpecSource::NextInArrival(RequestSpec* out) {
  if (Status s = FillWindow(); !s.ok()) return s;
  if (window_.empty()) return false;
  // top() is const; the entry is moved out (its ts and order, which pop compares, stay).
  *out = std::move(const_cast<Pending&>(window_.top()).spec);
  window_.pop();
  return true;
}

Result<bool> SpecSource::NextInSecond(RequestSpec* out) {
  if (second_next_ == second_.size()) {
    second_.clear();
    second_next_ = 0;
    RequestSpec first;
    Result<bool> got = NextInArrival(&first);
    if (!got.ok() || !*got) return got;
    const int64_t second_us = first.timestamp_us;
    second_.push_back(std::move(first));
    while (true) {
      if (Status s = FillWindow(); !s.ok()) return s;
      if (window_.empty() || window_.top().spec.timestamp_us != second_us) break;
      second_.emplace_back();
      if (Result<bool> next = NextInArrival(&second_.back()); !next.ok()) return next.status();
    }
    const int64_t n = static_cast<int64_t>(second_.size());
    for (int64_t k = 0; k < n; ++k)
      second_[static_cast<size_t>(k)].timestamp_us = second_us + k * 1'000'000 / n;
  }
  *out = std::move(second_[second_next_++]);
  return true;
}

void SpecSource::Schedule(RequestSpec* out) {
  if (!options_.timed) return;
  Nanos offset = out->offset;
  if (TimedByStamp()) {
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
    Result<bool> got = !options_.timed                        ? NextRead(out)
                       : format_ == TargetsFormat::kAccessLog ? NextInSecond(out)
                       : format_ == TargetsFormat::kJsonl     ? NextInArrival(out)
                                                              : NextRead(out);
    if (!got.ok() || !*got) return got;
    // Every entry, this part's or not, is scheduled: the parts share the whole file's offsets.
    Schedule(out);
    if (options_.split && !options_.split->Keeps(*out)) {
      ++skipped_["in the other parts of --split (" + std::to_string(options_.split->count()) +
                 " parts)"];
      continue;
    }
    if (out->body_truncated && !options_.send_truncated) {
      ++skipped_["body truncated when captured (--replay-truncated sends it)"];
      continue;
    }
    // An access log's URLs are on the base already.
    if (options_.base_url && format_ != TargetsFormat::kAccessLog) {
      options_.base_url->Apply(out, options_.preserve_host);
    }
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
    if (warning_.empty()) {
      if (vegeta_) warning_ = vegeta_->cut_short();
      if (jsonl_) warning_ = jsonl_->cut_short();
    }
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
  if (access_log_) {
    for (const auto& [reason, count] : access_log_->skipped())
      all[reason] += count;
  }
  for (const auto& [reason, count] : skipped_)
    all[reason] += count;
  return all;
}

std::string SpecSource::warning() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return warning_;
}

uint64_t SpecSource::read() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return read_;
}

}  // namespace hammer::load
