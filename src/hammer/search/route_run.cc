#include "hammer/search/route_run.h"

#include <fmt/format.h>

#include <memory>

#include "hammer/base/line_reader.h"
#include "hammer/base/write_all.h"
#include "hammer/search/dead_letter.h"
#include "hammer/search/route_line.h"

namespace hammer::search {
namespace {

constexpr size_t kFlushBytes = 64 * 1024;

class RouteWriter final : public BulkInputParser::Sink {
 public:
  RouteWriter(const RouteOptions& options, const DocumentRouter& router, int fd,
              DeadLetterWriter* dead_letters)
      : options_(options), router_(router), fd_(fd), dead_letters_(dead_letters) {
    stats_.per_shard.assign(static_cast<size_t>(router.number_of_shards()), 0);
  }

  void OnDocument(const BulkDocument& document) override {
    ++stats_.documents_read;
    Result<DocumentRoute> route = router_.Route(document);
    if (!route.ok()) {
      Reject(route.status().message(), document.action, document.source, document.has_source,
             document.line);
      return;
    }
    int64_t key = kUnroutableRouteKey;
    if (route->routable()) {
      ++stats_.routed;
      ++stats_.per_shard[static_cast<size_t>(route->shard)];
      key = RouteKey(route->shard, SlotHash(document), options_.partitions_per_shard);
    } else {
      ++stats_.unroutable;
      ++stats_.unroutable_reasons[std::string(route->reason)];
    }
    if (document.route_key && *document.route_key != key) ++stats_.route_key_mismatches;
    // A position id lives only in the action line, so the payload then carries the action.
    const InputFormat payload =
        options_.input.position_source ? InputFormat::kActionPairs : options_.input.format;
    AppendRouteLine(&buffer_, key, document, payload);
    if (buffer_.size() >= kFlushBytes) (void)Flush();  // an error stops the run
  }

  void OnRejected(InputRejection rejection) override {
    ++stats_.documents_read;
    Reject(rejection.reason, rejection.action, rejection.source, !rejection.source.empty(),
           rejection.line);
  }

  Status Flush() {
    if (status_.ok()) status_ = WriteAll(fd_, buffer_, "cannot write to standard output");
    buffer_.clear();
    return status_;
  }

  bool failed() const { return !status_.ok(); }
  RouteStats& stats() { return stats_; }

 private:
  void Reject(std::string_view reason, std::string_view action, std::string_view source,
              bool has_source, uint64_t line) {
    ++stats_.invalid_input;
    dead_letters_->Write({reason, 0, kInvalidInputType, action, source, has_source, line});
  }

  const RouteOptions& options_;
  const DocumentRouter& router_;
  int fd_;
  DeadLetterWriter* dead_letters_;
  RouteStats stats_;
  std::string buffer_;
  Status status_;
};

}  // namespace

Result<RouteStats> RunRoute(const RouteOptions& options, const DocumentRouter& router,
                            int output_fd) {
  Result<std::unique_ptr<DeadLetterWriter>> dead_letters =
      DeadLetterWriter::Open(options.dead_letter_path, "hammer route");
  if (!dead_letters.ok()) return dead_letters.status();
  Result<LineReader> lines =
      LineReader::Open(options.input_path, LineReader::WholeLines(options.max_line_bytes));
  if (!lines.ok()) return lines.status();
  BulkInputParser parser(options.input);
  RouteWriter writer(options, router, output_fd, dead_letters->get());
  std::string_view line;
  while (!writer.failed()) {
    Result<bool> more = lines->Next(&line);
    if (!more.ok()) return more.status();
    if (!*more) break;
    parser.Feed(line, lines->line_number(), &writer);
  }
  parser.Finish(&writer);
  if (Status status = writer.Flush(); !status.ok()) return status;
  if (Status status = (*dead_letters)->Close(); !status.ok()) return status;
  return std::move(writer.stats());
}

std::string FormatRouteSummary(const RouteStats& s) {
  std::string reasons;
  for (const auto& [reason, n] : s.unroutable_reasons) {
    reasons += fmt::format("{}{} {}", reasons.empty() ? "" : ", ", n, reason);
  }
  std::string out = fmt::format(
      "hammer route: {} document{}: {} routed, {} unroutable (key -1){}{}{}, {} dead-lettered\n",
      s.documents_read, s.documents_read == 1 ? "" : "s", s.routed, s.unroutable,
      reasons.empty() ? "" : " (", reasons, reasons.empty() ? "" : ")", s.invalid_input);
  std::string shards;
  for (size_t i = 0; i < s.per_shard.size(); ++i) {
    shards += fmt::format("{}{}:{}", i == 0 ? "" : " ", i, s.per_shard[i]);
  }
  out += fmt::format("  per shard: {}\n", shards);
  if (s.route_key_mismatches > 0) {
    out += fmt::format("  {} input route keys differed from the keys computed now\n",
                       s.route_key_mismatches);
  }
  return out;
}

}  // namespace hammer::search
