#include "hammer/dark/json_diff.h"

#include <simdjson.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <utility>

#include "hammer/base/strings.h"
#include "hammer/dark/protobuf_json.h"
#include "hammer/dark/uniform.h"
#include "hammer/http/grpc_wire.h"

namespace hammer::dark {

using simdjson::dom::element;
using simdjson::dom::element_type;

struct JsonDiff::Parsers {
  simdjson::dom::parser left;
  simdjson::dom::parser right;
};

namespace {

enum class JsonClass : uint8_t { kObject, kArray, kString, kNumber, kBool, kNull };

JsonClass ClassOf(element e) {
  switch (e.type()) {
    case element_type::OBJECT:
      return JsonClass::kObject;
    case element_type::ARRAY:
      return JsonClass::kArray;
    case element_type::STRING:
      return JsonClass::kString;
    case element_type::INT64:
    case element_type::UINT64:
    case element_type::DOUBLE:
      return JsonClass::kNumber;
    case element_type::BOOL:
      return JsonClass::kBool;
    case element_type::NULL_VALUE:
      return JsonClass::kNull;
  }
  return JsonClass::kNull;
}

// By value: integers exactly, anything involving a double as doubles (so 1 == 1.0).
bool NumbersEqual(element a, element b) {
  element_type ta = a.type();
  element_type tb = b.type();
  if (ta != element_type::DOUBLE && tb != element_type::DOUBLE) {
    if (ta == tb) {
      return ta == element_type::INT64
                 ? a.get_int64().value_unsafe() == b.get_int64().value_unsafe()
                 : a.get_uint64().value_unsafe() == b.get_uint64().value_unsafe();
    }
    // One int64, one uint64: simdjson uses uint64 only above INT64_MAX, so they differ.
    return false;
  }
  return a.get_double().value_unsafe() == b.get_double().value_unsafe();
}

std::string Truncate(std::string_view text) {
  if (text.size() <= kMaxRenderedBytes) return std::string(text);
  return std::string(text.substr(0, kMaxRenderedBytes - 3)) + "...";
}

std::string Render(element e) {
  switch (e.type()) {
    case element_type::OBJECT:
      return "object(" + std::to_string(e.get_object().value_unsafe().size()) + ")";
    case element_type::ARRAY:
      return "array(" + std::to_string(e.get_array().value_unsafe().size()) + ")";
    default:
      return Truncate(simdjson::to_string(e));
  }
}

bool IsPlainKey(std::string_view key) {
  if (key.empty()) return false;
  for (char c : key) {
    bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '_' || c == '$' || c == '@' || c == '-';
    if (!plain) return false;
  }
  return true;
}

void AppendKey(std::string& path, std::string_view key) {
  if (IsPlainKey(key)) {
    path += '.';
    path += key;
    return;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  path += "[\"";
  for (char c : key) {
    auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      path += '\\';
      path += c;
    } else if (byte < 0x20) {
      path += "\\u00";
      path += kHex[byte >> 4];
      path += kHex[byte & 15];
    } else {
      path += c;
    }
  }
  path += "\"]";
}

// All values of the headers named `name`, joined with ", "; nullopt when there is none.
std::optional<std::string> JoinedHeader(std::span<const http::Header> headers,
                                        std::string_view name) {
  std::optional<std::string> joined;
  for (const http::Header& header : headers) {
    if (!http::EqualsIgnoreCase(header.name, name)) continue;
    if (joined) {
      *joined += ", ";
      *joined += header.value;
    } else {
      joined.emplace(header.value);
    }
  }
  return joined;
}

// One comparison's walk over two parsed documents.
class Walker {
 public:
  Walker(const JsonDiff& diff, const JsonDiffOptions& options, DiffResult& result)
      : diff_(diff), options_(options), result_(result) {}

  // Records a difference at `path` (unless ignored or over the cap).
  void Add(std::string_view path, DifferenceKind kind, std::string left, std::string right) {
    if (stopped_ || diff_.IsIgnored(path)) return;
    if (raw_.size() >= options_.max_differences) {
      Stop();
      return;
    }
    raw_.push_back(FieldDifference{std::string(path), kind, std::move(left), std::move(right), 1});
  }

  void CompareDocuments(element left, element right) {
    path_ = "body";
    Diff(left, right, 0);
  }

  // Folds the differences found into one entry per path.
  void Finish() {
    std::unordered_map<std::string_view, size_t> index;
    result_.differences.reserve(raw_.size());
    for (FieldDifference& d : raw_) {
      auto found = index.find(d.path);
      if (found != index.end()) {
        ++result_.differences[found->second].occurrences;
        continue;
      }
      result_.differences.push_back(std::move(d));
      // The key views the string now owned by result_, which reserve() keeps in place.
      index.emplace(result_.differences.back().path, result_.differences.size() - 1);
    }
    raw_.clear();
  }

 private:
  void Stop() {
    stopped_ = true;
    result_.truncated = true;
  }

  bool Visit() {
    if (stopped_) return false;
    if (++nodes_ > options_.max_nodes) {
      Stop();
      return false;
    }
    return true;
  }

  void Diff(element left, element right, size_t depth) {
    if (!Visit()) return;
    if (depth > options_.max_depth) {
      Stop();
      return;
    }
    if (!options_.ignore.empty() && diff_.IsIgnored(path_)) return;
    JsonClass lc = ClassOf(left);
    JsonClass rc = ClassOf(right);
    if (lc != rc) {
      Add(path_, DifferenceKind::kType, Render(left), Render(right));
      return;
    }
    switch (lc) {
      case JsonClass::kObject:
        DiffObjects(left.get_object().value_unsafe(), right.get_object().value_unsafe(), depth);
        return;
      case JsonClass::kArray:
        DiffArrays(left.get_array().value_unsafe(), right.get_array().value_unsafe(), depth);
        return;
      case JsonClass::kString:
        if (left.get_string().value_unsafe() != right.get_string().value_unsafe())
          Add(path_, DifferenceKind::kValue, Render(left), Render(right));
        return;
      case JsonClass::kNumber:
        if (!NumbersEqual(left, right))
          Add(path_, DifferenceKind::kValue, Render(left), Render(right));
        return;
      case JsonClass::kBool:
        if (left.get_bool().value_unsafe() != right.get_bool().value_unsafe())
          Add(path_, DifferenceKind::kValue, Render(left), Render(right));
        return;
      case JsonClass::kNull:
        return;
    }
  }

  using Fields = std::vector<std::pair<std::string_view, element>>;

  static Fields SortedFields(simdjson::dom::object object) {
    Fields fields;
    fields.reserve(object.size());
    for (simdjson::dom::key_value_pair field : object)
      fields.emplace_back(field.key, field.value);
    // Stable: duplicate keys pair up in document order.
    std::stable_sort(fields.begin(), fields.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    return fields;
  }

  void DiffObjects(simdjson::dom::object left, simdjson::dom::object right, size_t depth) {
    Fields l = SortedFields(left);
    Fields r = SortedFields(right);
    size_t base = path_.size();
    size_t i = 0;
    size_t j = 0;
    while ((i < l.size() || j < r.size()) && !stopped_) {
      bool take_left = j == r.size() || (i < l.size() && l[i].first < r[j].first);
      bool take_right = i == l.size() || (j < r.size() && r[j].first < l[i].first);
      AppendKey(path_, take_left ? l[i].first : r[j].first);
      if (take_left) {
        if (Visit()) Add(path_, DifferenceKind::kMissing, Render(l[i].second), "");
        ++i;
      } else if (take_right) {
        if (Visit()) Add(path_, DifferenceKind::kExtra, "", Render(r[j].second));
        ++j;
      } else {
        Diff(l[i].second, r[j].second, depth + 1);
        ++i;
        ++j;
      }
      path_.resize(base);
    }
  }

  void DiffArrays(simdjson::dom::array left, simdjson::dom::array right, size_t depth) {
    size_t left_size = left.size();
    size_t right_size = right.size();
    if (left_size != right_size) {
      Add(path_, DifferenceKind::kSize, "size " + std::to_string(left_size),
          "size " + std::to_string(right_size));
      return;
    }
    size_t mark = raw_.size();
    size_t base = path_.size();
    path_ += "[]";
    auto r = right.begin();
    for (element l : left) {
      if (stopped_) break;
      Diff(l, *r, depth + 1);
      ++r;
    }
    path_.resize(base);
    if (raw_.size() == mark || stopped_) return;
    // Elements differ: if both hold the same multiset, the difference is only their order.
    std::vector<uint64_t> left_hashes;
    std::vector<uint64_t> right_hashes;
    left_hashes.reserve(left_size);
    right_hashes.reserve(right_size);
    for (element e : left)
      left_hashes.push_back(Hash(e, depth + 1));
    for (element e : right)
      right_hashes.push_back(Hash(e, depth + 1));
    if (stopped_) return;
    std::sort(left_hashes.begin(), left_hashes.end());
    std::sort(right_hashes.begin(), right_hashes.end());
    if (left_hashes != right_hashes) return;
    raw_.resize(mark);
    Add(path_, DifferenceKind::kOrder, "array(" + std::to_string(left_size) + ")",
        "array(" + std::to_string(right_size) + ")");
  }

  // A hash that agrees with the equality above (object key order ignored, 1 == 1.0). A
  // collision could only turn element differences into one kOrder difference.
  uint64_t Hash(element e, size_t depth) {
    if (!Visit() || depth > options_.max_depth) {
      Stop();
      return 0;
    }
    switch (ClassOf(e)) {
      case JsonClass::kObject: {
        uint64_t sum = 0;
        simdjson::dom::object object = e.get_object().value_unsafe();
        for (simdjson::dom::key_value_pair field : object)
          sum += Fmix64(Fnv1a64(field.key) * 31 + Hash(field.value, depth + 1));
        return Fmix64(sum ^ 0x6f626a656374ULL);
      }
      case JsonClass::kArray: {
        uint64_t h = 0x6172726179ULL;
        simdjson::dom::array array = e.get_array().value_unsafe();
        for (element item : array)
          h = Fmix64(h * 31 + Hash(item, depth + 1));
        return h;
      }
      case JsonClass::kString:
        return Fmix64(Fnv1a64(e.get_string().value_unsafe()) ^ 0x737472ULL);
      case JsonClass::kNumber: {
        double value = e.get_double().value_unsafe();
        if (value == 0) value = 0;  // -0.0 == 0.0
        return Fmix64(std::bit_cast<uint64_t>(value) ^ 0x6e756dULL);
      }
      case JsonClass::kBool:
        return e.get_bool().value_unsafe() ? 0x74727565ULL : 0x66616c7365ULL;
      case JsonClass::kNull:
        return 0x6e756c6cULL;
    }
    return 0;
  }

  const JsonDiff& diff_;
  const JsonDiffOptions& options_;
  DiffResult& result_;
  std::vector<FieldDifference> raw_;
  std::string path_;
  size_t nodes_ = 0;
  bool stopped_ = false;
};

// A gRPC answer's body as JSON (json_diff.h): its one message, or an array of its messages;
// nothing when it cannot be read so (not whole messages, compressed, a message that is not
// JSON or protobuf, or longer than `max_bytes` once read).
std::optional<std::string> GrpcBodyAsJson(const ResponseView& answer, size_t max_bytes) {
  bool compressed = false;
  std::optional<std::vector<std::string_view>> messages =
      http::SplitGrpcMessages(answer.body, &compressed);
  if (!messages || compressed) return std::nullopt;
  const std::string_view type = http::FindHeader(answer.headers, "content-type").value_or("");
  const bool json =
      type.size() >= 21 && http::EqualsIgnoreCase(type.substr(0, 21), "application/grpc+json");
  std::string out = messages->size() == 1 ? "" : "[";
  for (size_t i = 0; i < messages->size(); ++i) {
    if (i > 0) out.push_back(',');
    const std::string_view message = (*messages)[i];
    if (json) {
      out.append(message);
    } else {
      std::optional<std::string> read = ProtobufToJson(message);
      if (!read) return std::nullopt;
      out += *read;
    }
    if (out.size() > max_bytes) return std::nullopt;
  }
  if (messages->size() != 1) out.push_back(']');
  return out;
}

}  // namespace

std::string_view DifferenceKindName(DifferenceKind kind) {
  switch (kind) {
    case DifferenceKind::kValue:
      return "value";
    case DifferenceKind::kType:
      return "type";
    case DifferenceKind::kMissing:
      return "missing";
    case DifferenceKind::kExtra:
      return "extra";
    case DifferenceKind::kSize:
      return "size";
    case DifferenceKind::kOrder:
      return "order";
  }
  return "unknown";
}

const FieldDifference* DiffResult::Find(std::string_view path) const {
  for (const FieldDifference& d : differences) {
    if (d.path == path) return &d;
  }
  return nullptr;
}

JsonDiff::JsonDiff(JsonDiffOptions options)
    : options_(std::move(options)), parsers_(std::make_unique<Parsers>()) {
  for (std::string& name : options_.headers)
    name = AsciiStrToLower(name);
  if (options_.max_depth == 0) options_.max_depth = 1;
  // The parsers reject documents nested deeper than max_depth (DEPTH_ERROR): those bodies
  // are compared as bytes. Should this allocation fail, parse() allocates again with
  // simdjson's default depth, and the walk's own depth check still bounds its recursion.
  for (simdjson::dom::parser* parser : {&parsers_->left, &parsers_->right}) {
    simdjson::error_code error =
        parser->allocate(simdjson::dom::MINIMAL_DOCUMENT_CAPACITY, options_.max_depth);
    static_cast<void>(error);
  }
}

JsonDiff::~JsonDiff() = default;
JsonDiff::JsonDiff(JsonDiff&&) noexcept = default;
JsonDiff& JsonDiff::operator=(JsonDiff&&) noexcept = default;

bool JsonDiff::IsIgnored(std::string_view path) const {
  for (const std::string& prefix : options_.ignore) {
    if (prefix.empty() || !path.starts_with(prefix)) continue;
    if (path.size() == prefix.size()) return true;
    char next = path[prefix.size()];
    if (next == '.' || next == '[') return true;
  }
  return false;
}

DiffResult JsonDiff::Compare(const ResponseView& left, const ResponseView& right) {
  DiffResult result;
  Walker walker(*this, options_, result);
  if (left.status != right.status && !IsIgnored("status")) {
    walker.Add("status", DifferenceKind::kValue, std::to_string(left.status),
               std::to_string(right.status));
    walker.Finish();
    return result;
  }
  const bool grpc = http::IsGrpc(left.headers) && http::IsGrpc(right.headers);
  if (grpc) {
    const std::optional<uint32_t> l = http::GrpcStatusOf(left.headers);
    const std::optional<uint32_t> r = http::GrpcStatusOf(right.headers);
    if (l != r && !IsIgnored("grpc-status")) {
      auto text = [](std::optional<uint32_t> code) {
        return code ? std::to_string(*code) : std::string();
      };
      walker.Add("grpc-status",
                 !r   ? DifferenceKind::kMissing
                 : !l ? DifferenceKind::kExtra
                      : DifferenceKind::kValue,
                 text(l), text(r));
      walker.Finish();
      return result;
    }
  }
  for (const std::string& name : options_.headers) {
    std::optional<std::string> l = JoinedHeader(left.headers, name);
    std::optional<std::string> r = JoinedHeader(right.headers, name);
    if (l == r) continue;
    DifferenceKind kind = !r   ? DifferenceKind::kMissing
                          : !l ? DifferenceKind::kExtra
                               : DifferenceKind::kValue;
    walker.Add("header." + name, kind, Truncate(l.value_or("")), Truncate(r.value_or("")));
  }
  if (left.body != right.body && !IsIgnored("body")) {
    std::string_view left_body = left.body, right_body = right.body;
    std::optional<std::string> left_messages, right_messages;
    if (grpc) {
      left_messages = GrpcBodyAsJson(left, options_.max_body_bytes);
      right_messages = GrpcBodyAsJson(right, options_.max_body_bytes);
      if (left_messages && right_messages) {
        left_body = *left_messages;
        right_body = *right_messages;
      }
    }
    element l;
    element r;
    bool left_json =
        left_body.size() <= options_.max_body_bytes &&
        parsers_->left.parse(left_body.data(), left_body.size()).get(l) == simdjson::SUCCESS;
    bool right_json =
        right_body.size() <= options_.max_body_bytes &&
        parsers_->right.parse(right_body.data(), right_body.size()).get(r) == simdjson::SUCCESS;
    if (left_json && right_json) {
      walker.CompareDocuments(l, r);
    } else {
      walker.Add("body", left_json == right_json ? DifferenceKind::kValue : DifferenceKind::kType,
                 Truncate(left.body), Truncate(right.body));
    }
  }
  walker.Finish();
  return result;
}

}  // namespace hammer::dark
