// libFuzzer target for the HAR reader (ParseHar) and its ISO 8601 timestamp parser. Input: a
// HAR document. Seeds: tests/fuzz/corpus/har/.
//
// Besides crashes and sanitizer reports, __builtin_trap() fires when a returned request would
// not pass the readers' field checks (method, URL, headers), carries a header the reader must
// drop (pseudo-headers, Host, Content-Length, Connection, Transfer-Encoding, Accept-Encoding,
// ...), has an offset below -1, or when requests have offsets but none is 0 (offsets count
// from the earliest). An accepted timestamp must be re-parsed identically when its zone is
// spelled "+00:00" instead of "Z".
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "hammer/http/message.h"
#include "hammer/load/har.h"

namespace {

void Require(bool ok) {
  if (!ok) __builtin_trap();
}

bool Dropped(std::string_view name) {
  for (std::string_view dropped :
       {"host", "content-length", "connection", "keep-alive", "proxy-connection",
        "transfer-encoding", "te", "upgrade", "accept-encoding"}) {
    if (hammer::http::EqualsIgnoreCase(name, dropped)) return true;
  }
  return !name.empty() && name.front() == ':';
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);

  int64_t time = 0;
  if (hammer::load::ParseIsoTimestamp(input, &time) && input.ends_with("Z")) {
    std::string spelled(input.substr(0, input.size() - 1));
    spelled += "+00:00";
    int64_t again = 0;
    Require(hammer::load::ParseIsoTimestamp(spelled, &again) && again == time);
  }

  hammer::load::HarOptions options;
  options.keep_unanswered = size % 2 == 1;
  hammer::Result<hammer::load::HarReadResult> result =
      hammer::load::ParseHar(input, "fuzz.har", options);
  if (!result.ok()) {
    Require(std::string_view(result.status().message()).starts_with("fuzz.har: "));
    return 0;
  }
  bool any_offset = false, zero_offset = false;
  for (const hammer::load::RequestSpec& spec : result->requests) {
    Require(hammer::load::CheckMethod(spec.method).ok());
    Require(hammer::load::CheckUrl(spec.url).ok());
    for (const auto& [name, value] : spec.headers) {
      Require(hammer::load::CheckHeader(name, value).ok());
      Require(!Dropped(name));
    }
    Require(spec.offset >= -1);
    any_offset = any_offset || spec.offset >= 0;
    zero_offset = zero_offset || spec.offset == 0;
    Require(std::string_view(spec.where).starts_with("fuzz.har:entry "));
  }
  Require(!any_offset || zero_offset);
  for (const auto& [reason, count] : result->skipped)
    Require(!reason.empty() && count > 0);
  return 0;
}
