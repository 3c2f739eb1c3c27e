// libFuzzer target for the bulk input path: NDJSON lines → BulkInputParser → route lines →
// BulkInputParser(--from-route) again, plus routing and dead-letter formatting.
//
// Input layout: byte 0 chooses the options (bit 0: one document per line with --id-field "id"
// and --routing-field "r"; bit 1: the lines are route lines; bit 2: create instead of index;
// bits 3-5: number_of_shards - 1; bit 6: routing_partition_size 2), the rest is the text,
// split at '\n'.
// Traps when: a document's action or source is not valid JSON (or the source not an object),
// a delete carries a source or another op lacks one; more documents and rejections come out
// than non-blank lines went in; a document written as a route line does not read back as the
// same document (op, id, routing, index, source bytes, key); a dead-letter line is not valid
// JSON; a routable shard is outside [0, number_of_shards).
#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hammer/search/bulk_input.h"
#include "hammer/search/dead_letter.h"
#include "hammer/search/document_router.h"
#include "hammer/search/route_line.h"

namespace {

using namespace hammer::search;

void Check(bool condition) {
  if (!condition) __builtin_trap();
}

bool ValidJson(std::string_view text, bool must_be_object) {
  static simdjson::dom::parser parser;
  simdjson::padded_string padded(text);
  simdjson::dom::element root;
  if (parser.parse(padded).get(root) != simdjson::SUCCESS) return false;
  return !must_be_object || root.is_object();
}

struct Owned {
  BulkOp op;
  std::string source;
  bool has_source;
  std::optional<std::string> id, routing, index;
  bool id_unusable;
  std::optional<int64_t> key;
};

Owned Copy(const BulkDocument& d) {
  Owned o{d.op, std::string(d.source), d.has_source, {}, {}, {}, d.id_unusable, d.route_key};
  if (d.id) o.id = std::string(*d.id);
  if (d.routing) o.routing = std::string(*d.routing);
  if (d.index) o.index = std::string(*d.index);
  return o;
}

class Sink : public BulkInputParser::Sink {
 public:
  Sink(const InputOptions& options, const DocumentRouter& router)
      : options_(options), router_(router) {}

  void OnDocument(const BulkDocument& d) override {
    ++outputs;
    Check(ValidJson(d.action, true));
    Check(d.has_source == (d.op != BulkOp::kDelete));
    if (d.has_source) Check(ValidJson(d.source, true));
    Check(!(d.id && d.id_unusable));
    hammer::Result<DocumentRoute> route = router_.Route(d);
    int64_t key = kUnroutableRouteKey;
    if (route.ok() && route->routable()) {
      Check(route->shard >= 0 && route->shard < router_.number_of_shards());
      key = RouteKey(route->shard, SlotHash(d), 3);
      Check(ShardOfRouteKey(key, 3) == route->shard);
    }
    docs.push_back(Copy(d));
    docs.back().key = key;
    AppendRouteLine(&routed, key, d, options_.format);
    const std::string letter =
        FormatDeadLetter({"r", 400, "t", d.action, d.source, d.has_source, d.line});
    Check(ValidJson(letter, true));
  }
  void OnRejected(InputRejection r) override {
    ++outputs;
    Check(!r.reason.empty());
    const std::string letter = FormatDeadLetter(
        {r.reason, 0, kInvalidInputType, r.action, r.source, !r.source.empty(), r.line});
    Check(ValidJson(letter, true));
  }

  size_t outputs = 0;
  std::vector<Owned> docs;
  std::string routed;

 private:
  const InputOptions& options_;
  const DocumentRouter& router_;
};

class Reread : public BulkInputParser::Sink {
 public:
  void OnDocument(const BulkDocument& d) override { docs.push_back(Copy(d)); }
  void OnRejected(InputRejection) override { ++rejected; }
  std::vector<Owned> docs;
  size_t rejected = 0;
};

void Feed(BulkInputParser& parser, std::string_view text, BulkInputParser::Sink* sink,
          size_t* non_blank) {
  uint64_t line_number = 0;
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);  // as LineReader::WholeLines does
    if (non_blank && line.find_first_not_of(" \t\r") != std::string_view::npos) ++*non_blank;
    parser.Feed(line, ++line_number, sink);
  }
  parser.Finish(sink);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t flags = data[0];
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  InputOptions options;
  if (flags & 1) {
    options.format = InputFormat::kDocuments;
    options.id_field = "id";
    options.routing_field = "r";
  }
  options.from_route = (flags & 2) != 0;
  if (flags & 4) options.document_op = BulkOp::kCreate;
  IndexRoutingSpec spec;
  spec.distribution = SearchDistribution::kOpenSearch;
  spec.version_created = 2'19'00'99 ^ kOpenSearchVersionMask;
  spec.number_of_shards = 1 + ((flags >> 3) & 7);
  spec.routing_partition_size = (flags & 64) && spec.number_of_shards > 2 ? 2 : 1;
  DocumentRouter router(*ShardRouter::Create(spec), "t", "t", std::nullopt);

  BulkInputParser parser(options);
  Sink sink(options, router);
  size_t non_blank = 0;
  Feed(parser, text, &sink, &non_blank);
  Check(sink.outputs <= non_blank);
  if (!options.from_route && options.format == InputFormat::kActionPairs) {
    Check(2 * sink.outputs >= non_blank);
  }

  // What hammer route wrote reads back as the same documents.
  InputOptions again = options;
  again.from_route = true;
  BulkInputParser second(again);
  Reread reread;
  Feed(second, sink.routed, &reread, nullptr);
  Check(reread.rejected == 0);
  Check(reread.docs.size() == sink.docs.size());
  for (size_t i = 0; i < sink.docs.size(); ++i) {
    const Owned& a = sink.docs[i];
    const Owned& b = reread.docs[i];
    // A source ending in "\r\r" loses its last CR like any line read back (JSON whitespace).
    auto trimmed = [](std::string_view s) {
      while (!s.empty() && s.back() == '\r')
        s.remove_suffix(1);
      return s;
    };
    Check(a.op == b.op && trimmed(a.source) == trimmed(b.source) && a.has_source == b.has_source);
    Check(a.id == b.id && a.routing == b.routing && a.index == b.index);
    Check(a.id_unusable == b.id_unusable && a.key == b.key);
  }
  return 0;
}
