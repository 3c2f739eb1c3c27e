#include "hammer/load/jsonl_targets.h"

#include <simdjson.h>

#include <utility>

#include "hammer/base/base64.h"
#include "hammer/base/strings.h"

namespace hammer::load {
namespace {

bool IsBlank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

// A field of `object`: absent, or JSON null, leaves *value unset and returns false.
bool Field(simdjson::dom::object object, std::string_view name, simdjson::dom::element* value) {
  simdjson::dom::element found;
  if (object.at_key(name).get(found) != simdjson::SUCCESS) return false;
  if (found.is_null()) return false;
  *value = found;
  return true;
}

Status StringField(simdjson::dom::object object, std::string_view name, bool required,
                   std::string* out) {
  simdjson::dom::element value;
  if (!Field(object, name, &value)) {
    return required ? Status::Error("'" + std::string(name) + "' is missing") : Status::Ok();
  }
  std::string_view text;
  if (value.get_string().get(text) != simdjson::SUCCESS) {
    return Status::Error("'" + std::string(name) + "' must be a string");
  }
  *out = std::string(text);
  return Status::Ok();
}

Status ReadHeaders(simdjson::dom::element value, http::HeaderList* headers) {
  simdjson::dom::object object;
  if (value.get_object().get(object) != simdjson::SUCCESS) {
    return Status::Error("'header' must be an object of arrays of strings");
  }
  for (simdjson::dom::key_value_pair field : object) {
    simdjson::dom::array values;
    std::string problem = "header " + QuoteInput(field.key) + " must be an array of strings";
    if (field.value.get_array().get(values) != simdjson::SUCCESS) return Status::Error(problem);
    for (simdjson::dom::element item : values) {
      std::string_view text;
      if (item.get_string().get(text) != simdjson::SUCCESS) return Status::Error(problem);
      if (Status ok = CheckHeader(field.key, text); !ok.ok()) return ok;
      headers->emplace_back(field.key, text);
    }
  }
  return Status::Ok();
}

}  // namespace

struct JsonTargetReader::Parser {
  simdjson::dom::parser parser;
};

Result<JsonTargetReader> JsonTargetReader::Open(const std::string& path,
                                                const JsonTargetOptions& options) {
  LineReader::Options line_options = LineReader::WholeLines(options.max_line_bytes);
  line_options.interrupt = options.interrupt;
  Result<LineReader> lines = LineReader::Open(path, line_options);
  if (!lines.ok()) return lines.status();
  return JsonTargetReader(std::move(lines).value());
}

JsonTargetReader JsonTargetReader::FromString(std::string text, std::string name,
                                              const JsonTargetOptions& options) {
  return JsonTargetReader(LineReader::FromString(std::move(text), std::move(name),
                                                 LineReader::WholeLines(options.max_line_bytes)));
}

JsonTargetReader::JsonTargetReader(LineReader lines)
    : lines_(std::move(lines)), parser_(std::make_unique<Parser>()) {}
JsonTargetReader::JsonTargetReader(JsonTargetReader&&) noexcept = default;
JsonTargetReader& JsonTargetReader::operator=(JsonTargetReader&&) noexcept = default;
JsonTargetReader::~JsonTargetReader() = default;

Status JsonTargetReader::ParseLine(std::string_view line, RequestSpec* out, bool* not_json) {
  simdjson::dom::element document;
  simdjson::error_code error = parser_->parser.parse(line.data(), line.size()).get(document);
  *not_json = error != simdjson::SUCCESS;
  if (error != simdjson::SUCCESS) {
    return Status::Error(std::string("invalid JSON: ") + simdjson::error_message(error));
  }
  simdjson::dom::object object;
  if (document.get_object().get(object) != simdjson::SUCCESS) {
    return Status::Error("expected a JSON object");
  }
  if (Status ok = StringField(object, "method", true, &out->method); !ok.ok()) return ok;
  if (Status ok = CheckMethod(out->method); !ok.ok()) return ok;
  if (Status ok = StringField(object, "url", true, &out->url); !ok.ok()) return ok;
  if (Status ok = CheckUrl(out->url); !ok.ok()) return ok;
  simdjson::dom::element value;
  if (Field(object, "header", &value)) {
    if (Status ok = ReadHeaders(value, &out->headers); !ok.ok()) return ok;
  }
  if (Field(object, "ts", &value)) {
    if (value.get_int64().get(out->timestamp_us) != simdjson::SUCCESS || out->timestamp_us < 0) {
      return Status::Error("'ts' must be a non-negative integer (Unix microseconds)");
    }
  }
  if (Field(object, "conn", &value)) {
    uint64_t number = 0;
    std::string_view text;
    if (value.get_uint64().get(number) == simdjson::SUCCESS) {
      out->client = std::to_string(number);
    } else if (value.get_string().get(text) == simdjson::SUCCESS) {
      out->client = std::string(text);
    } else {
      return Status::Error("'conn' must be a non-negative integer or a string");
    }
  }
  if (Field(object, "body_truncated", &value)) {
    if (value.get_bool().get(out->body_truncated) != simdjson::SUCCESS) {
      return Status::Error("'body_truncated' must be true or false");
    }
  }
  std::string body64;
  if (Status ok = StringField(object, "body", false, &body64); !ok.ok()) return ok;
  if (!body64.empty()) {
    Result<std::string> body = Base64Decode(body64);
    if (!body.ok()) return Status::Error("'body' is not base64: " + body.status().message());
    out->body = std::move(body).value();
  }
  return Status::Ok();
}

Result<bool> JsonTargetReader::Next(RequestSpec* out) {
  if (failed_) return false;
  std::string_view line;
  while (true) {
    Result<bool> more = lines_.Next(&line);
    if (!more.ok()) {
      failed_ = true;
      return more.status();
    }
    if (!*more) return false;
    if (!IsBlank(line)) break;
  }
  *out = RequestSpec();
  std::string where = lines_.name() + ":" + std::to_string(lines_.line_number());
  bool not_json = false;
  if (Status ok = ParseLine(line, out, &not_json); !ok.ok()) {
    failed_ = true;
    if (not_json && lines_.last_unterminated()) {
      cut_line_ = std::move(where);
      return false;
    }
    return Status::Error(where + ": " + ok.message());
  }
  out->where = std::move(where);
  return true;
}

std::string JsonTargetReader::cut_short() const {
  std::string note = lines_.cut_short();
  if (!cut_line_.empty()) {
    if (!note.empty()) note += "; ";
    note += cut_line_ +
            ": the last line ends without its newline and is not whole JSON (a "
            "writer killed mid-write?): dropped";
  }
  return note;
}

}  // namespace hammer::load
