#include "hammer/search/batch_queue.h"

#include <algorithm>
#include <utility>

namespace hammer::search {

BatchQueue::BatchQueue(int lanes, size_t max_live_batches, std::function<void(int lane)> notify)
    : lanes_(static_cast<size_t>(lanes)),
      max_live_(max_live_batches < 1 ? 1 : max_live_batches),
      notify_(std::move(notify)) {}

bool BatchQueue::Push(std::unique_ptr<BulkBatch>* batch) {
  const int lane = (*batch)->lane();
  {
    std::unique_lock<std::mutex> lock(mutex_);
    space_.wait(lock, [this] { return aborted_ || live_ < max_live_; });
    if (aborted_) return false;
    lanes_[static_cast<size_t>(lane)].push_back(std::move(*batch));
    ++live_;
    ++queued_;
  }
  if (notify_) notify_(lane);
  return true;
}

void BatchQueue::CloseInput() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
  }
  if (notify_) notify_(-1);
}

std::unique_ptr<BulkBatch> BatchQueue::Pop(int lane) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& queue = lanes_[static_cast<size_t>(lane)];
  if (queue.empty()) return nullptr;
  std::unique_ptr<BulkBatch> batch = std::move(queue.front());
  queue.pop_front();
  --queued_;
  return batch;
}

void BatchQueue::Release() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (live_ > 0) --live_;
  }
  space_.notify_one();
}

void BatchQueue::Abort() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    aborted_ = true;
  }
  space_.notify_all();
}

std::vector<std::unique_ptr<BulkBatch>> BatchQueue::DrainAll() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::unique_ptr<BulkBatch>> out;
  for (auto& queue : lanes_) {
    for (auto& batch : queue)
      out.push_back(std::move(batch));
    queue.clear();
  }
  live_ -= std::min(live_, queued_);
  queued_ = 0;
  return out;
}

bool BatchQueue::input_closed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return closed_;
}

size_t BatchQueue::queued() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return queued_;
}

}  // namespace hammer::search
