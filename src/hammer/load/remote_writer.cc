#include "hammer/load/remote_writer.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>

#include "hammer/http/client.h"
#include "hammer/http/request_writer.h"
#include "hammer/net/loop_group.h"
#include "hammer/net/resolver.h"
#include "hammer/stats/remote_write_codec.h"

namespace hammer::load {

namespace {

// What is kept of a receiver's answer to quote it in a message.
constexpr size_t kQuotedBodyBytes = 300;

}  // namespace

// One exchange's answer; reused for every push (one at a time).
class RemoteWriter::Push final : public http::ResponseHandler {
 public:
  explicit Push(RemoteWriter* writer) : writer_(writer) {}

  void Reset() {
    status_ = 0;
    body_.clear();
  }
  void OnResponseHead(const http::ResponseHead& head) override { status_ = head.status; }
  void OnResponseBody(std::string_view data) override {
    body_.append(data.substr(0, kQuotedBodyBytes - std::min(body_.size(), kQuotedBodyBytes)));
  }
  void OnResponseComplete(const http::ExchangeResult& result) override {
    writer_->OnPushed(result.failure ? 0 : status_, result.detail, body_);
  }

 private:
  RemoteWriter* writer_;
  int status_ = 0;
  std::string body_;
};

struct RemoteWriter::Loop {
  net::LoopGroup group{1};
  net::Resolver resolver{1};
  std::unique_ptr<http::HttpClient> client;
  std::unique_ptr<net::Timer> timer;
  std::unique_ptr<Push> push;
  // The loop thread's state.
  bool in_flight = false;
  std::shared_ptr<const LoadMetrics::Snapshot> sending;    // the snapshot in flight
  std::shared_ptr<const LoadMetrics::Snapshot> delivered;  // the last one a receiver took
  std::string head;
  std::string body;
  bool said_rejected = false;
  bool said_failed = false;
  Counts counts;
  // Finish's wait for the final push.
  std::mutex mutex;
  std::condition_variable final_done;
  bool finishing = false;   // Finish was called: no more timed pushes
  bool final_sent = false;  // the final push has been sent (or had nothing to send)
  MonoNanos final_deadline = 0;
  bool finished = false;  // guarded by mutex
};

RemoteWriter::RemoteWriter(RemoteWriteOptions options, const LoadMetrics* metrics)
    : options_(std::move(options)), metrics_(metrics), loop_(std::make_unique<Loop>()) {}

Result<std::unique_ptr<RemoteWriter>> RemoteWriter::Start(RemoteWriteOptions options,
                                                          const LoadMetrics* metrics) {
  Result<http::Url> url = http::ParseUrl(options.url);
  if (!url.ok()) return Status::Error("--remote-write: " + url.status().message());
  std::unique_ptr<RemoteWriter> writer(new RemoteWriter(std::move(options), metrics));
  writer->url_ = *url;
  Loop& loop = *writer->loop_;
  if (Status s = loop.group.Init(); !s.ok()) return s;
  net::EventLoop* event_loop = loop.group.loop(0);
  http::ClientOptions client_options;
  client_options.tls = writer->options_.tls;
  client_options.connect_timeout = std::min<Nanos>(writer->options_.interval, 5 * kSecond);
  loop.client = std::make_unique<http::HttpClient>(event_loop, &loop.resolver, client_options);
  loop.push = std::make_unique<Push>(writer.get());
  RemoteWriter* raw = writer.get();
  loop.timer = std::make_unique<net::Timer>(event_loop, [raw] {
    raw->loop_->timer->ArmAfter(raw->options_.interval);
    raw->PushLatest(raw->loop_->client->loop()->UpdateNow() + raw->options_.interval);
  });
  loop.timer->ArmAfter(writer->options_.interval);
  loop.group.Start();
  return writer;
}

RemoteWriter::~RemoteWriter() {
  loop_->group.StopAll();
  loop_->group.Join();
  // The loop has stopped: what it owned goes on this thread.
  loop_->timer.reset();
  loop_->client->CancelAll();
  loop_->client.reset();
}

bool RemoteWriter::PushLatest(MonoNanos deadline) {
  Loop& loop = *loop_;
  if (loop.in_flight) return false;  // its deadline ends it before the next interval
  std::shared_ptr<const LoadMetrics::Snapshot> snapshot = metrics_->Latest();
  if (snapshot == loop.delivered) return false;
  std::vector<stats::RemoteWriteSample> samples;
  samples.reserve(snapshot->samples.size());
  for (const stats::PrometheusSample& sample : snapshot->samples) {
    stats::RemoteWriteSample& out = samples.emplace_back();
    out.labels.reserve(sample.labels.size() + options_.labels.size() + 1);
    out.labels.emplace_back("__name__", sample.name);
    for (const auto& label : sample.labels) {
      // The text format reads an empty value as no label; so must the receiver.
      if (!label.second.empty()) out.labels.push_back(label);
    }
    out.labels.insert(out.labels.end(), options_.labels.begin(), options_.labels.end());
    out.value = sample.value;
    out.timestamp_ms = snapshot->wall_millis;
  }
  loop.body = stats::SnappyCompress(stats::EncodeWriteRequest(samples));
  static const http::HeaderList kHeaders = {
      {"Content-Encoding", "snappy"},
      {"Content-Type", "application/x-protobuf"},
      {"X-Prometheus-Remote-Write-Version", "0.1.0"},
  };
  loop.head = http::SerializeRequestHead("POST", url_, kHeaders, loop.body.size());
  http::ClientRequest request;
  request.origin = loop.client->GetOrigin(url_);
  request.head = loop.head;
  request.body = loop.body;
  request.idempotent = true;  // the same samples twice are stored once
  request.deadline = deadline;
  loop.in_flight = true;
  loop.sending = std::move(snapshot);
  ++loop.counts.pushes;
  loop.push->Reset();
  loop.client->Send(request, loop.push.get());
  return true;
}

void RemoteWriter::PushFinal() {
  loop_->final_sent = true;
  if (!PushLatest(loop_->final_deadline)) SignalFinished();
}

void RemoteWriter::OnPushed(int status, const std::string& detail, const std::string& body) {
  Loop& loop = *loop_;
  loop.in_flight = false;
  if (status >= 200 && status < 300) {
    loop.delivered = std::move(loop.sending);
  } else {
    ++loop.counts.failed;
    std::string why = status == 0 ? detail : "HTTP " + std::to_string(status);
    if (status != 0 && !body.empty()) {
      std::string quoted = body;
      std::replace(quoted.begin(), quoted.end(), '\n', ' ');
      quoted.erase(quoted.find_last_not_of(' ') + 1);
      why += ": " + quoted;
    }
    loop.counts.last_failure = why;
    // 4xx: this data will never be taken (a wrong URL, a receiver not enabled, a rejected
    // sample); anything else may pass later.
    const bool rejected = status >= 400 && status < 500;
    bool& said = rejected ? loop.said_rejected : loop.said_failed;
    if (!said) {
      said = true;
      std::fprintf(stderr, "hammer load: --remote-write %s: %s (%s)\n", options_.url.c_str(),
                   rejected ? "the receiver rejected the metrics" : "a push failed", why.c_str());
    }
  }
  if (loop.finishing) {
    // The push that was in flight when the run ended is over: now the final figures.
    if (!loop.final_sent) return PushFinal();
    SignalFinished();
  }
}

void RemoteWriter::SignalFinished() {
  std::lock_guard<std::mutex> lock(loop_->mutex);
  loop_->finished = true;
  loop_->final_done.notify_all();
}

RemoteWriter::Counts RemoteWriter::Finish(Nanos timeout) {
  loop_->group.loop(0)->Post([this, timeout] {
    Loop& loop = *loop_;
    loop.timer->Cancel();
    loop.finishing = true;
    loop.final_deadline = loop.client->loop()->UpdateNow() + timeout;
    if (!loop.in_flight) PushFinal();  // else when the push in flight ends
  });
  {
    std::unique_lock<std::mutex> lock(loop_->mutex);
    loop_->final_done.wait_for(lock, std::chrono::nanoseconds(timeout + kSecond),
                               [this] { return loop_->finished; });
  }
  loop_->group.StopAll();
  loop_->group.Join();
  Counts counts = loop_->counts;
  if (!loop_->finished && loop_->in_flight) {
    ++counts.failed;  // abandoned by the destructor
    counts.last_failure =
        "no answer within " + std::to_string(timeout / kSecond) + " s at the end of the run";
  }
  return counts;
}

}  // namespace hammer::load
