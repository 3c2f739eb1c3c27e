// RemoteWriter: pushes a `hammer load` run's live metrics to a Prometheus remote-write receiver
// (--remote-write URL, --push-interval), so that a fleet of workers nobody can scrape (Hadoop
// tasks on random nodes and ports) shows up in one Prometheus.
//
// Every interval it takes the snapshot LoadMetrics last published (load_metrics.h: the very
// series /metrics serves) and POSTs it as one remote-write 1.0 request
// (stats/remote_write_codec.h: a Snappy-compressed WriteRequest, Content-Encoding: snappy,
// Content-Type: application/x-protobuf, X-Prometheus-Remote-Write-Version: 0.1.0), each series
// with `labels` added (the run id and the worker index), each sample stamped with the time the
// snapshot was rendered. A snapshot already delivered is not sent again.
//
// Failures never slow the run: pushes go out from a thread of their own, one at a time, each
// with a deadline of one interval. A push that fails (no connection, timeout, a non-2xx answer)
// is counted and not retried as such: the next interval sends the newest snapshot, which holds
// everything the lost one did (the series are cumulative). The first rejection (4xx: the
// receiver will not take this data) and the first other failure are each printed once on
// stderr, with the receiver's answer. Finish() makes one last push of the final figures.
//
// Threads: Start, Finish and the destructor on the run's controlling thread; pushes run on the
// writer's own event-loop thread and only read LoadMetrics::Latest().
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hammer/base/clock.h"
#include "hammer/base/status.h"
#include "hammer/http/tls.h"
#include "hammer/http/url.h"
#include "hammer/load/load_metrics.h"

namespace hammer::load {

struct RemoteWriteOptions {
  std::string url;  // http:// or https://
  Nanos interval = 5 * kSecond;
  // Added to every series, e.g. {"run_id", "job_1"}, {"worker", "3"}.
  std::vector<std::pair<std::string, std::string>> labels;
  http::TlsOptions tls;
};

class RemoteWriter {
 public:
  struct Counts {
    uint64_t pushes = 0;  // requests sent, the final one included
    uint64_t failed = 0;  // of them: no 2xx answer
    std::string last_failure;
  };

  // Checks the URL (errors name --remote-write) and starts pushing. `metrics` must outlive
  // this object and have been started with keep_samples.
  static Result<std::unique_ptr<RemoteWriter>> Start(RemoteWriteOptions options,
                                                     const LoadMetrics* metrics);
  ~RemoteWriter();  // stops; a push in flight is abandoned
  RemoteWriter(const RemoteWriter&) = delete;
  RemoteWriter& operator=(const RemoteWriter&) = delete;

  // After the run (LoadMetrics::EndRun): lets a push in flight end, pushes the final snapshot,
  // and stops once it is answered or `timeout` has passed (then what is still in flight is
  // abandoned and counted as failed). Returns what was pushed.
  Counts Finish(Nanos timeout);

 private:
  class Push;
  RemoteWriter(RemoteWriteOptions options, const LoadMetrics* metrics);
  // Sends the newest snapshot unless a push is in flight or it was delivered already; false
  // when nothing was sent.
  bool PushLatest(MonoNanos deadline);                                            // loop thread
  void OnPushed(int status, const std::string& detail, const std::string& body);  // loop thread
  void PushFinal();       // loop thread: the last push, by Loop::final_deadline
  void SignalFinished();  // loop thread: the final push ended (or had nothing to send)

  RemoteWriteOptions options_;
  const LoadMetrics* metrics_;
  http::Url url_;
  struct Loop;
  std::unique_ptr<Loop> loop_;
};

}  // namespace hammer::load
