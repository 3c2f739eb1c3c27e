#include "hammer/http/h2_fields.h"

#include <charconv>
#include <cstdio>

#include "hammer/base/strings.h"

namespace hammer::http {

namespace {

// Fields RFC 9113 §8.2.2 forbids in HTTP/2 (TE is handled apart: "trailers" may stay).
bool IsConnectionSpecific(std::string_view name) {
  return EqualsIgnoreCase(name, "connection") || EqualsIgnoreCase(name, "keep-alive") ||
         EqualsIgnoreCase(name, "proxy-connection") ||
         EqualsIgnoreCase(name, "transfer-encoding") || EqualsIgnoreCase(name, "upgrade");
}

// Takes the next CRLF-terminated line off `rest`; false when there is none.
bool NextLine(std::string_view& rest, std::string_view& line) {
  size_t end = rest.find("\r\n");
  if (end == std::string_view::npos) return false;
  line = rest.substr(0, end);
  rest.remove_prefix(end + 2);
  return true;
}

// The Connection field's value, when the head has one (its tokens name more fields to drop).
std::string_view ConnectionValue(std::string_view fields) {
  std::string_view line;
  while (NextLine(fields, line) && !line.empty()) {
    size_t colon = line.find(':');
    if (colon != std::string_view::npos && EqualsIgnoreCase(line.substr(0, colon), "connection")) {
      return TrimOws(line.substr(colon + 1));
    }
  }
  return {};
}

constexpr std::string_view kPseudoMethod = ":method";
constexpr std::string_view kPseudoScheme = ":scheme";
constexpr std::string_view kPseudoAuthority = ":authority";
constexpr std::string_view kPseudoPath = ":path";

}  // namespace

void H2RequestFields::Add(std::string_view name, std::string_view value) {
  uint32_t name_offset = static_cast<uint32_t>(bytes_.size());
  for (char c : name)
    bytes_.push_back(AsciiToLower(c));
  uint32_t value_offset = static_cast<uint32_t>(bytes_.size());
  bytes_.append(value);
  offsets_.emplace_back(name_offset, value_offset);
  lengths_.emplace_back(static_cast<uint32_t>(name.size()), static_cast<uint32_t>(value.size()));
}

Status H2RequestFields::Assign(std::string_view head, bool tls) {
  if (!built_head_.empty() && tls == built_tls_ && head == built_head_) return Status::Ok();
  built_head_.clear();
  bytes_.clear();
  offsets_.clear();
  lengths_.clear();
  fields_.clear();
  std::string_view rest = head;
  std::string_view line;
  if (!NextLine(rest, line)) return Status::Error("request head without a request line");
  size_t sp1 = line.find(' ');
  size_t sp2 = line.rfind(' ');
  if (sp1 == std::string_view::npos || sp2 == sp1 || sp1 == 0) {
    return Status::Error("malformed request line");
  }
  std::string_view method = line.substr(0, sp1);
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string_view authority_from_target;
  if (target.starts_with("http://") || target.starts_with("https://")) {
    // absolute-form: the path starts after the authority
    size_t start = target.find("//") + 2;
    size_t slash = target.find('/', start);
    authority_from_target = target.substr(start, slash - start);
    target = slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
  } else if (target.empty() || (target[0] != '/' && target != "*")) {
    return Status::Error("request target '" + std::string(target) + "' is not origin-form");
  }
  // Pseudo-header fields come first (RFC 9113 §8.3); their values are filled in below.
  Add(kPseudoMethod, method);
  Add(kPseudoScheme, tls ? "https" : "http");
  Add(kPseudoAuthority, authority_from_target);
  Add(kPseudoPath, target);
  std::string_view connection = ConnectionValue(rest);
  bool has_authority = !authority_from_target.empty();
  while (NextLine(rest, line) && !line.empty()) {
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) {
      return Status::Error("malformed header line in request head");
    }
    std::string_view name = line.substr(0, colon);
    std::string_view value = TrimOws(line.substr(colon + 1));
    if (EqualsIgnoreCase(name, "host")) {
      if (!has_authority) {
        uint32_t offset = static_cast<uint32_t>(bytes_.size());
        bytes_.append(value);
        offsets_[2].second = offset;
        lengths_[2].second = static_cast<uint32_t>(value.size());
        has_authority = true;
      }
      continue;
    }
    // "te: trailers" is the one TE allowed (RFC 9113 §8.2.2), kept even when Connection
    // names TE as an HTTP/1.1 sender of TE must.
    if (EqualsIgnoreCase(name, "te")) {
      if (EqualsIgnoreCase(value, "trailers")) Add(name, value);
      continue;
    }
    if (IsConnectionSpecific(name) || ListHasToken(connection, name)) continue;
    Add(name, value);
  }
  if (!has_authority) return Status::Error("request head without Host");
  fields_.reserve(offsets_.size());
  for (size_t i = 0; i < offsets_.size(); ++i) {
    nghttp2_nv nv;
    nv.name = reinterpret_cast<uint8_t*>(bytes_.data() + offsets_[i].first);
    nv.namelen = lengths_[i].first;
    nv.value = reinterpret_cast<uint8_t*>(bytes_.data() + offsets_[i].second);
    nv.valuelen = lengths_[i].second;
    // nghttp2 copies the fields when the request is submitted (no NO_COPY flag), so this
    // storage may be reused for the next request at once.
    nv.flags = NGHTTP2_NV_FLAG_NONE;
    fields_.push_back(nv);
  }
  method_ = std::string_view(bytes_).substr(offsets_[0].second, lengths_[0].second);
  built_head_.assign(head);
  built_tls_ = tls;
  return Status::Ok();
}

void H2HeadBuilder::Begin() {
  bytes_.clear();
  spans_.clear();
  headers_.clear();
  method_ = path_ = authority_ = protocol_ = {};
  status_ = 0;
  accounted_ = 0;
  has_host_ = false;
}

bool H2HeadBuilder::Add(std::string_view name, std::string_view value, size_t max_bytes,
                        size_t max_fields) {
  accounted_ += name.size() + value.size() + 32;
  if (accounted_ > max_bytes || spans_.size() >= max_fields) return false;
  if (name == ":status") {
    int status = 0;
    auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), status);
    status_ = (ec == std::errc() && ptr == value.data() + value.size()) ? status : 0;
  }
  if (name == "host") has_host_ = true;
  Span span;
  span.name_offset = static_cast<uint32_t>(bytes_.size());
  span.name_size = static_cast<uint32_t>(name.size());
  bytes_.append(name);
  span.value_offset = static_cast<uint32_t>(bytes_.size());
  span.value_size = static_cast<uint32_t>(value.size());
  bytes_.append(value);
  spans_.push_back(span);
  return true;
}

std::span<const Header> H2HeadBuilder::headers() {
  headers_.clear();
  std::string_view bytes(bytes_);
  for (const Span& s : spans_) {
    std::string_view name = bytes.substr(s.name_offset, s.name_size);
    std::string_view value = bytes.substr(s.value_offset, s.value_size);
    if (!name.empty() && name[0] == ':') {
      if (name == kPseudoMethod) method_ = value;
      if (name == kPseudoPath) path_ = value;
      if (name == kPseudoAuthority) authority_ = value;
      if (name == ":protocol") protocol_ = value;
      continue;
    }
    headers_.push_back({name, value});
  }
  return headers_;
}

std::optional<uint64_t> H2HeadBuilder::ContentLength() {
  std::optional<std::string_view> value = FindHeader(headers(), "content-length");
  uint64_t n = 0;
  if (!value ||
      std::from_chars(value->data(), value->data() + value->size(), n).ec != std::errc()) {
    return std::nullopt;
  }
  return n;
}

ResponseHead H2HeadBuilder::MakeResponseHead(bool head_request) {
  ResponseHead head;
  head.major_version = 2;
  head.minor_version = 0;
  head.status = status_;
  head.headers = headers();
  head.framing = BodyFraming::kNone;
  if (!head_request) {
    if (std::optional<uint64_t> length = ContentLength()) {
      head.framing = BodyFraming::kContentLength;
      head.content_length = *length;
    } else {
      head.framing = BodyFraming::kUntilClose;  // until the stream ends
    }
  }
  head.keep_alive = true;
  return head;
}

bool H2HeadBuilder::IsExtendedConnect() {
  headers();
  return method_ == "CONNECT" && !protocol_.empty();
}

RequestHead H2HeadBuilder::MakeRequestHead(uint64_t body_size) {
  const bool tunnel = IsExtendedConnect();
  if (!has_host_ && !authority_.empty()) headers_.insert(headers_.begin(), {"host", authority_});
  if (tunnel) headers_.push_back({"upgrade", protocol_});
  RequestHead head;
  head.major_version = 2;
  head.minor_version = 0;
  head.method = tunnel ? std::string_view("GET") : method_;
  head.target = path_;
  head.headers = headers_;
  head.framing = body_size > 0 ? BodyFraming::kContentLength : BodyFraming::kNone;
  head.content_length = body_size;
  head.keep_alive = true;
  return head;
}

std::string H2ErrorName(uint32_t code) {
  static constexpr std::string_view kNames[] = {
      "NO_ERROR",
      "PROTOCOL_ERROR",
      "INTERNAL_ERROR",
      "FLOW_CONTROL_ERROR",
      "SETTINGS_TIMEOUT",
      "STREAM_CLOSED",
      "FRAME_SIZE_ERROR",
      "REFUSED_STREAM",
      "CANCEL",
      "COMPRESSION_ERROR",
      "CONNECT_ERROR",
      "ENHANCE_YOUR_CALM",
      "INADEQUATE_SECURITY",
      "HTTP_1_1_REQUIRED",
  };
  if (code < std::size(kNames)) return std::string(kNames[code]);
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%x", code);
  return buf;
}

bool SubmitTrailerFields(nghttp2_session* session, int32_t stream_id,
                         std::span<const Header> trailers) {
  std::string bytes;
  size_t total = 0;
  for (const Header& h : trailers)
    total += h.name.size() + h.value.size();
  bytes.reserve(total);  // the views below point into it: no reallocation after this
  std::vector<nghttp2_nv> fields;
  for (const Header& h : trailers) {
    if (h.name.empty() || h.name[0] == ':' || IsConnectionSpecific(h.name) ||
        EqualsIgnoreCase(h.name, "te") || EqualsIgnoreCase(h.name, "content-length")) {
      continue;
    }
    size_t name_at = bytes.size();
    for (char c : h.name)
      bytes.push_back(AsciiToLower(c));
    size_t value_at = bytes.size();
    bytes.append(h.value);
    nghttp2_nv nv;
    nv.name = reinterpret_cast<uint8_t*>(bytes.data() + name_at);
    nv.namelen = h.name.size();
    nv.value = reinterpret_cast<uint8_t*>(bytes.data() + value_at);
    nv.valuelen = h.value.size();
    nv.flags = NGHTTP2_NV_FLAG_NONE;  // nghttp2 copies them
    fields.push_back(nv);
  }
  if (fields.empty()) return false;
  return nghttp2_submit_trailer(session, stream_id, fields.data(), fields.size()) == 0;
}

}  // namespace hammer::http
