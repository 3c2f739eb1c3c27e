#include "hammer/load/record_sink.h"

#include <algorithm>

#include "hammer/base/write_all.h"

namespace hammer::load {

void RecordSink::Write(std::string_view bytes) {
  if (bytes.empty()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!status_.ok()) return;
  size_t written = 0;
  status_ = WriteAll(fd_, bytes, "cannot write records", &written);
  // The lines whose end went out: a reader has them whole even when the write failed after.
  records_written_ +=
      static_cast<uint64_t>(std::count(bytes.begin(), bytes.begin() + written, '\n'));
  if (!status_.ok()) failed_.store(true, std::memory_order_relaxed);
}

Status RecordSink::status() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return status_;
}

uint64_t RecordSink::records_written() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return records_written_;
}

}  // namespace hammer::load
