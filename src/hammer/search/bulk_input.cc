#include "hammer/search/bulk_input.h"

#include <simdjson.h>

#include <charconv>
#include <utility>

#include "hammer/search/json_text.h"
#include "hammer/search/position_id.h"

namespace hammer::search {
namespace {

bool IsBlank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

std::optional<BulkOp> OpFromName(std::string_view name) {
  for (BulkOp op : {BulkOp::kIndex, BulkOp::kCreate, BulkOp::kUpdate, BulkOp::kDelete}) {
    if (BulkOpName(op) == name) return op;
  }
  return std::nullopt;
}

// A string or an integer as the text the server reads (Jackson's text() of the token). Other
// numbers (1.5, 1e3) are left out: their text cannot be rebuilt exactly from a parsed double.
std::optional<std::string> ScalarText(simdjson::dom::element value) {
  std::string_view text;
  if (value.get_string().get(text) == simdjson::SUCCESS) return std::string(text);
  int64_t signed_value = 0;
  if (value.get_int64().get(signed_value) == simdjson::SUCCESS) {
    return std::to_string(signed_value);
  }
  uint64_t unsigned_value = 0;
  if (value.get_uint64().get(unsigned_value) == simdjson::SUCCESS) {
    return std::to_string(unsigned_value);
  }
  return std::nullopt;
}

// The value at a dotted path ("user.id") of `object`, if present and not null.
std::optional<simdjson::dom::element> FieldAtPath(simdjson::dom::object object,
                                                  std::string_view path) {
  simdjson::dom::element current;
  while (true) {
    const size_t dot = path.find('.');
    const std::string_view segment = path.substr(0, dot);
    if (object.at_key(segment).get(current) != simdjson::SUCCESS) return std::nullopt;
    if (dot == std::string_view::npos) break;
    path.remove_prefix(dot + 1);
    if (current.get_object().get(object) != simdjson::SUCCESS) return std::nullopt;
  }
  if (current.is_null()) return std::nullopt;
  return current;
}

constexpr std::string_view kNotAnAction =
    "not a bulk action line: expected {\"index\"|\"create\"|\"update\"|\"delete\":{...}}";

}  // namespace

std::string_view BulkOpName(BulkOp op) {
  switch (op) {
    case BulkOp::kIndex:
      return "index";
    case BulkOp::kCreate:
      return "create";
    case BulkOp::kUpdate:
      return "update";
    case BulkOp::kDelete:
      return "delete";
  }
  return "index";
}

// simdjson needs SIMDJSON_PADDING readable bytes after the input; lines are copied into one
// reused buffer rather than letting the parser allocate a padded copy per call.
struct BulkInputParser::Json {
  simdjson::dom::parser parser;
  std::string padded;

  simdjson::simdjson_result<simdjson::dom::element> Parse(std::string_view text) {
    if (padded.size() < text.size() + simdjson::SIMDJSON_PADDING) {
      padded.resize(text.size() + simdjson::SIMDJSON_PADDING);
    }
    padded.replace(0, text.size(), text);
    return parser.parse(padded.data(), text.size(), false);
  }
};

BulkInputParser::BulkInputParser(InputOptions options)
    : options_(std::move(options)), json_(std::make_unique<Json>()) {}

BulkInputParser::~BulkInputParser() = default;

std::optional<std::string> BulkInputParser::MakePositionId(uint64_t line_number) {
  position_id_ = PositionId(*options_.position_source, line_number);
  if (position_id_.size() <= kMaxIdBytes) return std::nullopt;
  return "id from position is longer than " + std::to_string(kMaxIdBytes) +
         " bytes (the _id limit): name the input with HAMMER_INPUT_NAME";
}

std::optional<std::string> BulkInputParser::ParseAction(std::string_view line, Action* action) {
  simdjson::dom::element root;
  if (simdjson::error_code error = json_->Parse(line).get(root)) {
    return std::string("invalid JSON: ") + simdjson::error_message(error);
  }
  simdjson::dom::object object;
  if (root.get_object().get(object) != simdjson::SUCCESS || object.size() != 1) {
    return std::string(kNotAnAction);
  }
  const simdjson::dom::key_value_pair entry = *object.begin();
  std::optional<BulkOp> op = OpFromName(entry.key);
  simdjson::dom::object metadata;
  if (!op || entry.value.get_object().get(metadata) != simdjson::SUCCESS) {
    return std::string(kNotAnAction);
  }
  *action = Action{};
  action->op = *op;
  for (simdjson::dom::key_value_pair field : metadata) {
    if (field.key == "_id") {
      if (field.value.is_null()) continue;
      action->id = ScalarText(field.value);
      action->id_unusable = !action->id.has_value();
    } else if (field.key == "routing" || field.key == "_routing") {
      if (field.value.is_null()) continue;
      std::optional<std::string> routing = ScalarText(field.value);
      if (!routing) return "\"" + std::string(field.key) + "\" must be a string";
      action->routing = std::move(routing);
    } else if (field.key == "_index") {
      std::string_view index;
      if (field.value.get_string().get(index) != simdjson::SUCCESS) {
        return std::string("\"_index\" must be a string");
      }
      action->index = std::string(index);
    }
  }
  return std::nullopt;
}

std::string BulkInputParser::CheckSource(std::string_view line) {
  simdjson::dom::element root;
  if (simdjson::error_code error = json_->Parse(line).get(root)) {
    return std::string("invalid JSON in source: ") + simdjson::error_message(error);
  }
  if (!root.is_object()) return "source is not a JSON object";
  return "";
}

void BulkInputParser::Feed(std::string_view line, uint64_t line_number, Sink* sink) {
  if (IsBlank(line)) return;
  if (options_.from_route) {
    FeedRouteLine(line, line_number, sink);
  } else if (options_.format == InputFormat::kDocuments) {
    FeedDocument(line, line_number, std::nullopt, sink);
  } else {
    FeedPairs(line, line_number, sink);
  }
}

void BulkInputParser::Finish(Sink* sink) {
  if (!pending_) return;
  Pending pending = std::move(*pending_);
  pending_.reset();
  std::string reason = pending.action ? "action line without its source line at the end of input"
                                      : std::move(pending.error);
  sink->OnRejected({std::move(reason), std::move(pending.line), "", pending.line_number});
}

void BulkInputParser::FeedPairs(std::string_view line, uint64_t line_number, Sink* sink) {
  if (!pending_) {
    FeedActionLine(line, line_number, sink);
    return;
  }
  if (!pending_->action) {
    // An invalid action: this line is its source, unless it is a valid action itself.
    Action next;
    if (!ParseAction(line, &next)) {
      Pending bad = std::move(*pending_);
      pending_.reset();
      sink->OnRejected({std::move(bad.error), std::move(bad.line), "", bad.line_number});
      FeedActionLine(line, line_number, sink);
      return;
    }
    Pending bad = std::move(*pending_);
    pending_.reset();
    sink->OnRejected(
        {std::move(bad.error), std::move(bad.line), std::string(line), bad.line_number});
    return;
  }
  Pending pending = std::move(*pending_);
  pending_.reset();
  if (std::string reason = CheckSource(line); !reason.empty()) {
    sink->OnRejected(
        {std::move(reason), std::move(pending.line), std::string(line), pending.line_number});
    return;
  }
  EmitPair(*pending.action, pending.line, line, true, pending.line_number, std::nullopt, sink);
}

void BulkInputParser::FeedActionLine(std::string_view line, uint64_t line_number, Sink* sink) {
  Pending pending;
  pending.line_number = line_number;
  Action action;
  if (std::optional<std::string> error = ParseAction(line, &action)) {
    pending.error = std::move(*error);
  } else if (action.op == BulkOp::kDelete) {
    EmitPair(action, line, "", false, line_number, std::nullopt, sink);
    return;
  } else {
    pending.action = std::move(action);
  }
  pending.line = std::string(line);
  pending_ = std::move(pending);
}

void BulkInputParser::EmitPair(const Action& action, std::string_view action_line,
                               std::string_view source, bool has_source, uint64_t line_number,
                               std::optional<int64_t> key, Sink* sink) {
  BulkDocument document;
  document.op = action.op;
  document.action = action_line;
  if (action.id) document.id = *action.id;
  if (options_.position_source && !action.id && !action.id_unusable &&
      (action.op == BulkOp::kIndex || action.op == BulkOp::kCreate)) {
    if (std::optional<std::string> reason = MakePositionId(line_number)) {
      sink->OnRejected(
          {std::move(*reason), std::string(action_line), std::string(source), line_number});
      return;
    }
    built_action_.clear();
    AppendActionWithId(&built_action_, action_line, position_id_);
    document.action = built_action_;
    document.id = position_id_;
  }
  document.source = source;
  document.has_source = has_source;
  document.id_unusable = action.id_unusable;
  if (action.routing) document.routing = *action.routing;
  if (action.index) document.index = *action.index;
  document.route_key = key;
  document.line = line_number;
  sink->OnDocument(document);
}

void BulkInputParser::FeedDocument(std::string_view line, uint64_t line_number,
                                   std::optional<int64_t> key, Sink* sink) {
  simdjson::dom::element root;
  if (simdjson::error_code error = json_->Parse(line).get(root)) {
    sink->OnRejected({std::string("invalid JSON: ") + simdjson::error_message(error),
                      std::string(line), "", line_number});
    return;
  }
  simdjson::dom::object object;
  if (root.get_object().get(object) != simdjson::SUCCESS) {
    sink->OnRejected({"document is not a JSON object", std::string(line), "", line_number});
    return;
  }
  Action& action = scratch_action_;
  action = Action{};
  action.op = options_.document_op;
  std::optional<simdjson::dom::element> id = FieldAtPath(object, options_.id_field);
  if (id) {
    action.id = ScalarText(*id);
  } else if (!options_.position_source) {
    sink->OnRejected(
        {"missing id field \"" + options_.id_field + "\"", std::string(line), "", line_number});
    return;
  } else if (std::optional<std::string> reason = MakePositionId(line_number)) {
    sink->OnRejected({std::move(*reason), std::string(line), "", line_number});
    return;
  } else {
    action.id = position_id_;
  }
  if (!action.id || action.id->empty()) {
    sink->OnRejected({"id field \"" + options_.id_field + "\" is not a non-empty string or integer",
                      std::string(line), "", line_number});
    return;
  }
  if (!options_.routing_field.empty()) {
    if (std::optional<simdjson::dom::element> routing =
            FieldAtPath(object, options_.routing_field)) {
      action.routing = ScalarText(*routing);
      if (!action.routing) {
        sink->OnRejected(
            {"routing field \"" + options_.routing_field + "\" is not a string or integer",
             std::string(line), "", line_number});
        return;
      }
    }
  }
  built_action_.assign("{\"");
  built_action_.append(BulkOpName(action.op));
  built_action_.append("\":{\"_id\":");
  AppendJsonString(&built_action_, *action.id);
  if (action.routing && !action.routing->empty()) {
    built_action_.append(",\"routing\":");
    AppendJsonString(&built_action_, *action.routing);
  }
  built_action_.append("}}");
  BulkDocument document;
  document.op = action.op;
  document.action = built_action_;
  document.source = line;
  document.has_source = true;
  document.document_line = line;
  document.id = *action.id;
  if (action.routing) document.routing = *action.routing;
  document.route_key = key;
  document.line = line_number;
  sink->OnDocument(document);
}

void BulkInputParser::FeedRouteLine(std::string_view line, uint64_t line_number, Sink* sink) {
  const size_t tab = line.find('\t');
  const std::string_view key_text = line.substr(0, tab);
  int64_t key = 0;
  auto [end, error] = std::from_chars(key_text.data(), key_text.data() + key_text.size(), key);
  if (tab == std::string_view::npos || error != std::errc() ||
      end != key_text.data() + key_text.size() || key < -1) {
    sink->OnRejected({"malformed route line: expected KEY<TAB>PAYLOAD with an integer KEY >= -1",
                      std::string(line), "", line_number});
    return;
  }
  const std::string_view payload = line.substr(tab + 1);
  if (options_.format == InputFormat::kDocuments) {
    FeedDocument(payload, line_number, key, sink);
    return;
  }
  const size_t split = payload.find('\t');
  const std::string_view action_line = payload.substr(0, split);
  const bool has_source = split != std::string_view::npos;
  const std::string_view source = has_source ? payload.substr(split + 1) : std::string_view();
  Action action;
  std::string reason;
  if (std::optional<std::string> action_error = ParseAction(action_line, &action)) {
    reason = std::move(*action_error);
  } else if (action.op == BulkOp::kDelete && has_source) {
    reason = "delete action followed by a source";
  } else if (action.op != BulkOp::kDelete && !has_source) {
    reason = "action without its source";
  } else if (has_source) {
    reason = CheckSource(source);
  }
  if (!reason.empty()) {
    sink->OnRejected(
        {std::move(reason), std::string(action_line), std::string(source), line_number});
    return;
  }
  EmitPair(action, action_line, source, has_source, line_number, key, sink);
}

}  // namespace hammer::search
