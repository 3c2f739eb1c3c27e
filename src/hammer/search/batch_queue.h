// BatchQueue: hands closed batches from the reader thread to the event loop that writes them,
// one FIFO per lane, with a bound on the batches alive (queued or being written) so that a slow
// cluster slows the reader instead of filling memory.
//
// Threads: Push/CloseInput from the reader thread; Pop/Release/Abort from the loop thread;
// everything behind one mutex (one lock per batch of ~1000 documents, not per document). The
// `notify` callback runs on the reader thread after each Push and after CloseInput, outside the
// lock; the run uses it to Post() a wake-up to the loop.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "hammer/search/bulk_batch.h"

namespace hammer::search {

class BatchQueue {
 public:
  // `notify(lane)`: lane of the pushed batch, or -1 after CloseInput.
  BatchQueue(int lanes, size_t max_live_batches, std::function<void(int lane)> notify);

  // Waits while max_live_batches are alive, then takes *batch. After Abort(): returns false
  // and leaves *batch with the caller (to account for its documents).
  bool Push(std::unique_ptr<BulkBatch>* batch);
  // The reader is done: no more Push.
  void CloseInput();

  // The oldest batch of `lane`, or nullptr. The batch stays alive until Release().
  std::unique_ptr<BulkBatch> Pop(int lane);
  // A popped batch is finished (every item indexed or dead-lettered).
  void Release();
  // Wakes the reader and refuses further pushes; queued batches stay for DrainAll().
  void Abort();
  // Everything still queued, all lanes (after Abort, to account for it).
  std::vector<std::unique_ptr<BulkBatch>> DrainAll();

  bool input_closed() const;
  size_t queued() const;

 private:
  mutable std::mutex mutex_;
  std::condition_variable space_;
  std::vector<std::deque<std::unique_ptr<BulkBatch>>> lanes_;
  size_t max_live_;
  size_t live_ = 0;
  size_t queued_ = 0;
  bool closed_ = false;
  bool aborted_ = false;
  std::function<void(int)> notify_;
};

}  // namespace hammer::search
