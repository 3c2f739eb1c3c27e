#include "hammer/search/bulk_response.h"

#include <simdjson.h>

#include <array>

namespace hammer::search {
namespace {

using simdjson::dom::element;
using simdjson::dom::object;

std::string_view StringOr(object parent, std::string_view key, std::string_view fallback) {
  std::string_view value;
  if (parent.at_key(key).get_string().get(value) != simdjson::SUCCESS) return fallback;
  return value;
}

// "type: reason", or just the one that is present.
void AppendTypeAndReason(std::string* out, std::string_view type, std::string_view reason) {
  out->append(type);
  if (!type.empty() && !reason.empty()) out->append(": ");
  out->append(reason);
}

void ReadError(element error, BulkItemResult* result) {
  std::string_view text;
  if (error.get_string().get(text) == simdjson::SUCCESS) {
    result->reason = text.empty() ? "error without a reason" : std::string(text);
    return;
  }
  object fields;
  if (error.get_object().get(fields) != simdjson::SUCCESS) {
    result->reason = "unreadable error";
    return;
  }
  result->error_type = std::string(StringOr(fields, "type", ""));
  AppendTypeAndReason(&result->reason, result->error_type, StringOr(fields, "reason", ""));
  object cause;
  if (fields.at_key("caused_by").get_object().get(cause) == simdjson::SUCCESS) {
    result->reason.append(" (caused by ");
    AppendTypeAndReason(&result->reason, StringOr(cause, "type", ""),
                        StringOr(cause, "reason", ""));
    result->reason.push_back(')');
  }
  if (result->reason.empty()) result->reason = "error without a reason";
}

}  // namespace

struct BulkResponseParser::Json {
  simdjson::dom::parser parser;
  std::string padded;
};

BulkResponseParser::BulkResponseParser() : json_(std::make_unique<Json>()) {}
BulkResponseParser::~BulkResponseParser() = default;

Status BulkResponseParser::Parse(std::string_view body, size_t expected_items, BulkResponse* out) {
  json_->padded.assign(body);
  json_->padded.append(simdjson::SIMDJSON_PADDING, ' ');
  element root;
  if (simdjson::error_code error =
          json_->parser.parse(json_->padded.data(), body.size(), false).get(root)) {
    return Status::Error(std::string("bulk response is not JSON: ") +
                         simdjson::error_message(error));
  }
  simdjson::dom::array items;
  if (root["items"].get_array().get(items) != simdjson::SUCCESS) {
    return Status::Error("bulk response has no items array");
  }
  if (items.size() != expected_items) {
    return Status::Error("bulk response has " + std::to_string(items.size()) + " items for " +
                         std::to_string(expected_items) + " actions");
  }
  BulkResponse response;
  int64_t took = 0;
  if (root["took"].get_int64().get(took) == simdjson::SUCCESS) response.took_ms = took;
  bool errors = false;
  if (root["errors"].get_bool().get(errors) == simdjson::SUCCESS) response.errors = errors;
  response.items.reserve(expected_items);
  for (element item : items) {
    object wrapper;
    object fields;
    if (item.get_object().get(wrapper) != simdjson::SUCCESS || wrapper.size() != 1 ||
        (*wrapper.begin()).value.get_object().get(fields) != simdjson::SUCCESS) {
      return Status::Error("bulk response item is not {\"<op>\":{...}}");
    }
    BulkItemResult result;
    int64_t status = 0;
    if (fields.at_key("status").get_int64().get(status) != simdjson::SUCCESS || status < 100 ||
        status > 599) {
      return Status::Error("bulk response item without a valid status");
    }
    result.status = static_cast<int>(status);
    element error;
    if (fields.at_key("error").get(error) == simdjson::SUCCESS && !error.is_null()) {
      ReadError(error, &result);
    } else if (!result.ok() && result.status != 404) {
      result.reason = "status " + std::to_string(result.status) + " without an error";
    }
    response.items.push_back(std::move(result));
  }
  *out = std::move(response);
  return Status::Ok();
}

bool IsRetryableItemFailure(int status, std::string_view error_type) {
  if (status == 429 || status == 502 || status == 503 || status == 504) return true;
  static constexpr std::array<std::string_view, 12> kTransient = {
      "es_rejected_execution_exception",
      "opensearch_rejected_execution_exception",
      "rejected_execution_exception",
      "unavailable_shards_exception",
      "no_shard_available_action_exception",
      "primary_missing_action_exception",
      "node_closed_exception",
      "node_not_connected_exception",
      "connect_transport_exception",
      "receive_timeout_transport_exception",
      "send_request_transport_exception",
      "node_disconnected_exception",
  };
  for (std::string_view type : kTransient) {
    if (error_type == type) return true;
  }
  return false;
}

bool IsRetryableHttpStatus(int http_status) {
  return http_status == 429 || (http_status >= 500 && http_status <= 599);
}

bool IsVersionConflict(int status, std::string_view error_type) {
  return status == 409 || error_type == "version_conflict_engine_exception";
}

}  // namespace hammer::search
