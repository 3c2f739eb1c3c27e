// ProtobufToJson: protobuf's wire types read without a schema, nesting, repeated fields, and
// bytes that are no message. Encodings from protobuf.dev/programming-guides/encoding (its
// example: field 1 = 150 is 08 96 01; field 2 = "testing" is 12 07 74 65 73 74 69 6e 67).
#include "hammer/dark/protobuf_json.h"

#include <gtest/gtest.h>

#include <string>

namespace hammer::dark {
namespace {

std::string Bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values)
    out.push_back(static_cast<char>(v));
  return out;
}

TEST(ProtobufJsonTest, TheEncodingGuidesExamples) {
  EXPECT_EQ(ProtobufToJson(Bytes({0x08, 0x96, 0x01})), R"({"1":150})");
  EXPECT_EQ(ProtobufToJson(Bytes({0x12, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g'})),
            R"({"2":"testing"})");
  // Field 3 holding a message whose field 1 is 150.
  EXPECT_EQ(ProtobufToJson(Bytes({0x1a, 0x03, 0x08, 0x96, 0x01})), R"({"3":{"1":150}})");
  EXPECT_EQ(ProtobufToJson(""), "{}");
}

TEST(ProtobufJsonTest, FixedWidthsRepeatedFieldsAndFieldOrder) {
  const std::string message = Bytes({0x2d, 0x01, 0x00, 0x00, 0x00,                // 5: I32 1
                                     0x21, 0x02, 0,    0,    0,    0,   0, 0, 0,  // 4: I64 2
                                     0x08, 0x01, 0x08, 0x02, 0x08, 0x03});        // 1: 1, 2, 3
  EXPECT_EQ(ProtobufToJson(message), R"({"1":[1,2,3],"4":2,"5":1})");
}

TEST(ProtobufJsonTest, BytesThatAreNeitherTextNorAMessageAreBase64) {
  EXPECT_EQ(ProtobufToJson(Bytes({0x0a, 0x02, 0xff, 0xfe})), R"({"1":{"bytes":"//4="}})");
  // Text wins over a reading as a message ("hi" would read as field 13 = 105).
  EXPECT_EQ(ProtobufToJson(Bytes({0x0a, 0x02, 'h', 'i'})), R"({"1":"hi"})");
  EXPECT_EQ(ProtobufToJson(Bytes({0x0a, 0x03, 'a', '"', '\n'})), R"({"1":"a\"\n"})");
}

TEST(ProtobufJsonTest, WhatIsNoMessage) {
  EXPECT_FALSE(ProtobufToJson(Bytes({0x08})));             // a varint cut short
  EXPECT_FALSE(ProtobufToJson(Bytes({0x0a, 0x05, 'a'})));  // a length past the end
  EXPECT_FALSE(ProtobufToJson(Bytes({0x0b})));             // a group (wire type 3)
  EXPECT_FALSE(ProtobufToJson(Bytes({0x00, 0x01})));       // field number 0
  EXPECT_FALSE(ProtobufToJson(Bytes({0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                     0xff, 0x01})));  // a varint of 11 bytes
}

TEST(ProtobufJsonTest, LimitsBoundTheWork) {
  // Nested three deep: with max_depth 2 the innermost stays bytes.
  const std::string inner = Bytes({0x08, 0x01});
  const std::string middle = Bytes({0x0a, 0x02}) + inner;
  const std::string outer = Bytes({0x0a, 0x04}) + middle;
  EXPECT_EQ(ProtobufToJson(outer), R"({"1":{"1":{"1":1}}})");
  EXPECT_EQ(ProtobufToJson(outer, {.max_depth = 2}), R"({"1":{"1":{"bytes":"CAE="}}})");
  std::string many;
  for (int i = 0; i < 10; ++i)
    many += inner;
  EXPECT_TRUE(ProtobufToJson(many, {.max_fields = 10}));
  EXPECT_FALSE(ProtobufToJson(many, {.max_fields = 9}));
}

}  // namespace
}  // namespace hammer::dark
