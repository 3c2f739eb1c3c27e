// libFuzzer target for ResponseParser; the checks are described in parser_fuzz.h.
// Seeds: tests/fuzz/corpus/response_parser/.
#include "hammer/http/response_parser.h"
#include "parser_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hammer::http::fuzz::CheckStream<hammer::http::ResponseParser>(data, size);
  return 0;
}
