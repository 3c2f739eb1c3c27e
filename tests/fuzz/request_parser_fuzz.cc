// libFuzzer target for RequestParser; the checks are described in parser_fuzz.h.
// Seeds: tests/fuzz/corpus/request_parser/.
#include "hammer/http/request_parser.h"
#include "parser_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hammer::http::fuzz::CheckStream<hammer::http::RequestParser>(data, size);
  return 0;
}
