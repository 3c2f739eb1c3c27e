// ProtobufToJson: a serialized protobuf message read without its schema, as JSON, so that
// `hammer dark --compare` compares gRPC answers field by field the way it compares JSON ones
// (json_diff.h), noise rules included: field 2 of the message in field 1 has the path
// "body.1.2".
//
// The wire format (protobuf.dev/programming-guides/encoding): a message is a sequence of
// records, each a varint key (field_number << 3 | wire_type) and a value:
//   0 VARINT  a varint                      -> a JSON number (the unsigned value; a schema would
//                                              say whether it is zigzag, signed or a bool)
//   1 I64     8 bytes, little-endian         -> a JSON number (the unsigned 64-bit value)
//   2 LEN     a varint length, then bytes    -> a nested message when the bytes are not
//                                              printable UTF-8 text and parse as one; else a
//                                              string when they are UTF-8; else
//                                              {"bytes": base64}
//   5 I32     4 bytes, little-endian         -> a JSON number (the unsigned 32-bit value)
// Groups (wire types 3 and 4, deprecated) and anything else make the bytes no message. Keys are
// the field numbers as strings; a field that occurs more than once (repeated) becomes an array
// of its values in wire order; fields come out in ascending number. Like `protoc --decode_raw`,
// this is a reading, not the truth: a packed repeated field reads as bytes or a message.
//
// Bounded: nesting beyond max_depth is left as bytes, and at most max_fields records are read
// in all, counting those of bytes tried as a message in vain (beyond them: no message). Pure;
// thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace hammer::dark {

struct ProtobufJsonLimits {
  size_t max_depth = 32;
  size_t max_fields = 100'000;
};

// The JSON text of `message` (an object; "{}" for no bytes), or nothing when the bytes are not a
// message.
std::optional<std::string> ProtobufToJson(std::string_view message, ProtobufJsonLimits limits = {});

}  // namespace hammer::dark
