// libFuzzer target for ProtobufToJson, which reads the protobuf messages of gRPC answers (an
// upstream's and a dark cluster's: server input) without their schema. Input: the message.
// Seeds: tests/fuzz/corpus/protobuf_json/.
//
// Besides crashes and sanitizer reports, __builtin_trap() fires when a reading is not one valid
// JSON object, or when the bytes read with tight limits give a reading the loose limits do not
// also accept (tighter limits may only turn a message into no message, or nesting into bytes).
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "hammer/dark/protobuf_json.h"

namespace {

void Check(bool condition) {
  if (!condition) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view message(reinterpret_cast<const char*>(data), size);
  const auto loose = hammer::dark::ProtobufToJson(message);
  if (loose) {
    const nlohmann::json parsed =
        nlohmann::json::parse(*loose, nullptr, /*allow_exceptions=*/false);
    Check(!parsed.is_discarded() && parsed.is_object());
  }
  const auto tight = hammer::dark::ProtobufToJson(message, {.max_depth = 2, .max_fields = 64});
  if (tight) {
    Check(nlohmann::json::accept(*tight));
    Check(loose.has_value());
  }
  return 0;
}
