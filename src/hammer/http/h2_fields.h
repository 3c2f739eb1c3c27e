// Translation between the engine's HTTP/1.1 message heads and HTTP/2 field lists (RFC 9113
// §8.2-8.3), so that everything above the connection (load's prepared requests, the dark
// proxy's forwarded heads, the server's handlers) is the same for both protocols.
//
// Requests: the engine serializes a request head once and sends it many times; on an HTTP/2
// connection H2RequestFields turns it into the HEADERS field list: the pseudo-header fields
// :method, :scheme, :authority (from Host) and :path (the origin-form target), then the other
// fields with lower-case names, minus those HTTP/2 forbids (connection-specific fields:
// Connection and the fields it names, Keep-Alive, Proxy-Connection, Transfer-Encoding,
// Upgrade, and TE other than "trailers"). Host itself is dropped: :authority carries it.
//
// Received heads: H2HeadBuilder collects the fields of one HEADERS block (nghttp2 has checked
// them) and presents them as the engine's ResponseHead or RequestHead, with the pseudo-header
// fields taken out (a request's :authority becomes its Host field, as RFC 9113 §8.3.1 allows).
#pragma once

#include <nghttp2/nghttp2.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hammer/base/status.h"
#include "hammer/http/message.h"

namespace hammer::http {

class H2RequestFields {
 public:
  // Builds the field list of `head` ("METHOD SP target SP HTTP/1.x CRLF *(name: value CRLF)
  // CRLF"). Errors: no request line, a line without a colon, a target that is not origin-form
  // ("/..." or "*" for OPTIONS) or absolute-form, or no Host field. Storage is reused between
  // calls; the list is valid until the next Assign. The same head assigned again (a load run
  // sends one prepared head over and over) keeps the list already built.
  Status Assign(std::string_view head, bool tls);
  std::span<const nghttp2_nv> fields() const { return fields_; }
  std::string_view method() const { return method_; }

 private:
  void Add(std::string_view name, std::string_view value);

  std::string bytes_;  // lower-cased names and the values, back to back
  std::vector<std::pair<uint32_t, uint32_t>> offsets_;  // name offset, value offset in bytes_
  std::vector<std::pair<uint32_t, uint32_t>> lengths_;
  std::vector<nghttp2_nv> fields_;
  std::string_view method_;
  std::string built_head_;  // the head the list was built from; empty when it was not
  bool built_tls_ = false;
};

// The fields of one received HEADERS block, kept until the next Begin().
class H2HeadBuilder {
 public:
  void Begin();
  // Adds one field as nghttp2 hands it over. False when the block is over `max_bytes` (names
  // and values plus 32 bytes per field, RFC 9113's accounting) or over `max_fields` fields.
  bool Add(std::string_view name, std::string_view value, size_t max_bytes, size_t max_fields);

  // Bytes of names and values kept.
  size_t size() const { return bytes_.size(); }
  // The :status of a response block, 0 when it has none (trailers).
  int status() const { return status_; }
  // Regular (non-pseudo) fields.
  std::span<const Header> headers();
  // The content-length field's value, when the block has one that parses (nghttp2 refuses a
  // malformed one before the block is complete).
  std::optional<uint64_t> ContentLength();
  // A response head: status and regular fields; framing from content-length when present.
  ResponseHead MakeResponseHead(bool head_request);
  // A request head: :method and :path as method and target, :authority as a Host field (unless
  // the block has its own Host), HTTP/1.1, keep-alive.
  RequestHead MakeRequestHead(uint64_t body_size);
  // An extended CONNECT (RFC 8441 §4: :method CONNECT with a :protocol, e.g. websocket): a
  // request to open a tunnel of that protocol on the stream. MakeRequestHead gives it as its
  // HTTP/1.1 twin: GET with "upgrade: <protocol>".
  bool IsExtendedConnect();

 private:
  std::string bytes_;
  struct Span {
    uint32_t name_offset, name_size, value_offset, value_size;
  };
  std::vector<Span> spans_;
  std::vector<Header> headers_;
  std::string_view method_, path_, authority_, protocol_;
  int status_ = 0;
  size_t accounted_ = 0;
  bool has_host_ = false;
};

// Submits `trailers` as the last HEADERS frame of `stream_id` (nghttp2_submit_trailer): names
// lower-cased, and the fields HTTP/2 forbids or that frame a message left out (pseudo-header
// fields, connection-specific ones, TE, Content-Length). False when none is left or nghttp2
// refused them; the caller then ends the stream with its DATA instead.
bool SubmitTrailerFields(nghttp2_session* session, int32_t stream_id,
                         std::span<const Header> trailers);

// The name of an HTTP/2 error code ("PROTOCOL_ERROR", "REFUSED_STREAM", ...; "0x1a" for codes
// RFC 9113 does not define).
std::string H2ErrorName(uint32_t code);

}  // namespace hammer::http
