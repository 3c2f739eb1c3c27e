#include "hammer/dark/capture_writer.h"

#include <fcntl.h>
#include <re2/re2.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <utility>

#include "hammer/base/zstd_frames.h"
#include "hammer/dark/uniform.h"

namespace hammer::dark {
namespace {

// Lines are gathered into writes of about this size: few system calls, and a short enough
// write that a kill is unlikely to land inside it.
constexpr size_t kWriteBytes = 256 * 1024;
// Compressed, into frames of about one zstd block (128 KiB, RFC 8878 §3.1.1.2.3): libzstd
// decodes a compressed block only once all of it is there, so a frame cut by a kill decodes
// to nothing rather than to part of a line.
constexpr size_t kFrameBytes = 128 * 1024;

// The writer gathers lines for up to kLinger after the first arrives, unless kGatherBytes of
// exchanges are queued first: one wake-up and one write for many lines rather than for each.
constexpr auto kLinger = std::chrono::milliseconds(20);
constexpr size_t kGatherBytes = 256 * 1024;

size_t QueuedSize(const CapturedExchange& exchange) {
  return sizeof(CapturedExchange) + exchange.head.size() + exchange.body.size() +
         exchange.authority.size();
}

}  // namespace

CaptureWriter::CaptureWriter(const CaptureOptions& options)
    : options_(options), redaction_(options.redact, options.keep) {
  if (options_.zstd) zstd_ = std::make_unique<ZstdFrameEncoder>(options_.zstd_level);
}

Result<std::unique_ptr<CaptureWriter>> CaptureWriter::Open(const CaptureOptions& options) {
  std::unique_ptr<CaptureWriter> writer(new CaptureWriter(options));
  for (const std::string& pattern : options.filters) {
    auto re = std::make_unique<re2::RE2>(pattern, re2::RE2::Quiet);
    if (!re->ok()) {
      return Status::Error("--capture-filter '" + pattern + "': " + re->error());
    }
    writer->filters_.push_back(std::move(re));
  }
  if (Status opened = writer->OpenFile(); !opened.ok()) return opened;
  writer->thread_ = std::thread([w = writer.get()] { w->Run(); });
  return writer;
}

Status CaptureWriter::OpenFile() {
  int fd = ::open(options_.path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return Status::Error(options_.path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fchmod(fd, 0600) != 0 || ::fstat(fd, &st) != 0) {
    int error = errno;
    ::close(fd);
    return Status::Error(options_.path + ": " + std::strerror(error));
  }
  fd_ = fd;
  file_size_ = static_cast<uint64_t>(st.st_size);
  file_begun_us_ = WallNowMicros();
  file_begun_ = MonoNow();
  return Status::Ok();
}

std::string CaptureWriter::CompletedName(int64_t begun_us, int attempt) const {
  std::string stem = options_.path;
  if (stem.ends_with(".zst")) stem.resize(stem.size() - 4);
  if (stem.ends_with(".jsonl")) stem.resize(stem.size() - 6);
  const time_t seconds = static_cast<time_t>(begun_us / 1'000'000);
  struct tm utc {};
  gmtime_r(&seconds, &utc);
  char when[32];
  std::strftime(when, sizeof(when), "%Y%m%dT%H%M%SZ", &utc);
  return stem + "-" + when + (attempt > 1 ? "-" + std::to_string(attempt) : "") +
         (options_.zstd ? ".jsonl.zst" : ".jsonl");
}

void CaptureWriter::MaybeRotate(bool closing) {
  if (!options_.rotates() || fd_ < 0 || file_size_ == 0) return;
  const bool due =
      closing || (options_.rotate_bytes > 0 && file_size_ >= options_.rotate_bytes) ||
      (options_.rotate_interval > 0 && MonoNow() - file_begun_ >= options_.rotate_interval);
  if (!due) return;
  // The completed name is taken without replacing anything (RENAME_NOREPLACE): a file of
  // the same second, or of another run, keeps its lines.
  for (int attempt = 1; attempt < 1000; ++attempt) {
    std::string name = CompletedName(file_begun_us_, attempt);
    if (::renameat2(AT_FDCWD, options_.path.c_str(), AT_FDCWD, name.c_str(), RENAME_NOREPLACE) ==
        0) {
      CountShared(counters_.files_completed);
      break;
    }
    if (errno != EEXIST) return;  // left as it is: lines keep going to it
  }
  ::close(fd_);
  fd_ = -1;
  if (!closing && !OpenFile().ok()) fd_ = -1;  // later lines are dropped as write errors
}

CaptureWriter::~CaptureWriter() {
  Close();
}

bool CaptureWriter::Choose(std::string_view method, std::string_view target, int64_t now_us,
                           std::mt19937_64& rng) {
  if (!filters_.empty()) {
    std::string line(method);
    line.push_back(' ');
    line.append(target.substr(0, target.find('?')));
    bool matched = false;
    for (const auto& filter : filters_) {
      if (re2::RE2::FullMatch(line, *filter)) {
        matched = true;
        break;
      }
    }
    if (!matched) {
      CountShared(counters_.skipped_filter);
      return false;
    }
  }
  if (options_.rate < 1.0 && UniformFromBits(rng()) >= options_.rate) {
    CountShared(counters_.skipped_rate);
    return false;
  }
  if (options_.max_rps > 0) {
    const int64_t second = now_us / 1'000'000;
    int64_t counted = rps_second_.load(std::memory_order_relaxed);
    if (counted != second && rps_second_.compare_exchange_strong(counted, second)) {
      rps_count_.store(0, std::memory_order_relaxed);
    }
    if (rps_count_.fetch_add(1, std::memory_order_relaxed) >= options_.max_rps) {
      CountShared(counters_.skipped_max_rps);
      return false;
    }
  }
  return true;
}

void CaptureWriter::Submit(std::unique_ptr<CapturedExchange> exchange) {
  if (exchange->body_truncated) CountShared(counters_.truncated_bodies);
  const size_t size = QueuedSize(*exchange);
  bool wake = false;
  {
    std::lock_guard lock(mutex_);
    if (closing_ || queue_.size() >= options_.queue_max_lines ||
        queued_bytes_ + size > options_.queue_max_bytes) {
      CountShared(counters_.dropped_queue_full);
      return;
    }
    // The writer waits for the first exchange, then lingers until enough have come.
    wake = queue_.empty() || (queued_bytes_ < kGatherBytes && queued_bytes_ + size >= kGatherBytes);
    queue_.push_back(std::move(exchange));
    queued_bytes_ += size;
    ++submitted_;
  }
  if (wake) wake_.notify_one();
}

void CaptureWriter::Flush() {
  std::unique_lock lock(mutex_);
  const uint64_t target = submitted_;
  wake_.notify_one();  // ends the writer's lingering
  written_.wait(lock, [&] { return done_ >= target || stopped_; });
}

void CaptureWriter::Close() {
  {
    std::lock_guard lock(mutex_);
    if (closing_) return;
    closing_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
  MaybeRotate(/*closing=*/true);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  written_.notify_all();
}

void CaptureWriter::Run() {
  std::deque<std::unique_ptr<CapturedExchange>> batch;
  std::string lines;
  const size_t write_bytes = zstd_ ? kFrameBytes : kWriteBytes;
  while (true) {
    {
      std::unique_lock lock(mutex_);
      // A file due by time is completed even when no traffic comes (checked every second).
      while (queue_.empty() && !closing_) {
        if (options_.rotate_interval == 0) {
          wake_.wait(lock);
          continue;
        }
        if (wake_.wait_for(lock, std::chrono::seconds(1)) == std::cv_status::timeout) {
          lock.unlock();
          MaybeRotate(false);
          lock.lock();
        }
      }
      if (queue_.empty()) {  // closing, and everything is written
        stopped_ = true;
        written_.notify_all();
        return;
      }
      // Any wake-up ends the lingering early: enough queued, Flush, Close.
      if (!closing_ && queued_bytes_ < kGatherBytes) wake_.wait_for(lock, kLinger);
      batch.swap(queue_);
      queued_bytes_ = 0;
    }
    const uint64_t taken = batch.size();
    uint64_t count = 0;
    for (const auto& exchange : batch) {
      const size_t before = lines.size();
      AppendCaptureLine(lines, *exchange, redaction_);
      // The lines before this one fill a write: they go, this one begins the next.
      if (lines.size() > write_bytes && count > 0) {
        WriteLines(std::string_view(lines).substr(0, before), count);
        lines.erase(0, before);
        count = 0;
      }
      ++count;
    }
    if (count > 0) WriteLines(lines, count);
    lines.clear();
    batch.clear();
    {
      std::lock_guard lock(mutex_);
      done_ += taken;
    }
    written_.notify_all();
  }
}

void CaptureWriter::WriteLines(std::string_view lines, uint64_t count) {
  if (fd_ < 0) {
    CountShared(counters_.dropped_write_error, count);
    return;
  }
  if (zstd_) {
    frame_.clear();
    if (!zstd_->AppendFrame(lines, frame_).ok()) {
      CountShared(counters_.dropped_write_error, count);
      return;
    }
    lines = frame_;
  }
  size_t written = 0;
  while (written < lines.size()) {
    ssize_t n = ::write(fd_, lines.data() + written, lines.size() - written);
    if (n > 0) {
      written += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    // A full disk, a quota, an I/O error: no part of these lines stays in the file.
    if (written > 0 && ::ftruncate(fd_, static_cast<off_t>(file_size_)) != 0) {
      file_size_ += written;  // cannot be undone: the partial line stays
    }
    CountShared(counters_.dropped_write_error, count);
    return;
  }
  file_size_ += written;
  CountShared(counters_.lines, count);
  CountShared(counters_.bytes, written);
  MaybeRotate(false);
}

std::string CaptureWriter::Summary() const {
  auto get = [](const std::atomic<uint64_t>& c) {
    return std::to_string(c.load(std::memory_order_relaxed));
  };
  return "capture " + options_.path + ": lines written " + get(counters_.lines) +
         ", dropped (queue full) " + get(counters_.dropped_queue_full) +
         ", dropped (write error) " + get(counters_.dropped_write_error) + ", bodies truncated " +
         get(counters_.truncated_bodies) + "\n";
}

}  // namespace hammer::dark
