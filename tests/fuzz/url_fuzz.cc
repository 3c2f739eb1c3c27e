// libFuzzer target for ParseUrl and ResolveLocation. Input: a URL, optionally followed by a
// newline and a Location value to resolve against it. Seeds: tests/fuzz/corpus/url/.
//
// Besides crashes and sanitizer reports, __builtin_trap() fires when an accepted URL (parsed
// or resolved) is not canonical: scheme not http/https, empty or upper-case host, port 0,
// target not starting with '/', a byte that cannot go in a request line, or a ToString()
// that does not parse back to the same Url. Resolving a URL's own ToString() against it must
// give it back. UrlParser, given the base and then the second line as a URL, must answer
// exactly as ParseUrl does for each.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "hammer/http/url.h"

namespace {

using hammer::http::Url;

void Require(bool ok) {
  if (!ok) __builtin_trap();
}

void CheckCanonical(const Url& url) {
  Require(url.scheme == "http" || url.scheme == "https");
  Require(!url.host.empty());
  for (char c : url.host)
    Require(!(c >= 'A' && c <= 'Z'));
  Require(url.port != 0);
  Require(!url.target.empty() && url.target[0] == '/');
  Require(url.target.find('#') == std::string::npos);
  std::string text = url.ToString();
  for (char c : text) {
    unsigned char byte = static_cast<unsigned char>(c);
    Require(byte > 0x20 && byte < 0x7f);
  }
  Require(std::string_view(url.target).starts_with(url.Path()));
  hammer::Result<Url> again = hammer::http::ParseUrl(text);
  Require(again.ok() && *again == url);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  size_t newline = input.find('\n');
  std::string_view base_text = input.substr(0, newline);
  hammer::Result<Url> base = hammer::http::ParseUrl(base_text);
  hammer::http::UrlParser parser;
  Url parsed;
  for (std::string_view text :
       {base_text, newline == std::string_view::npos ? base_text : input.substr(newline + 1)}) {
    hammer::Status status = parser.Parse(text, &parsed);
    hammer::Result<Url> expected = hammer::http::ParseUrl(text);
    Require(status.ok() == expected.ok());
    Require(status.ok() ? parsed == *expected : status.message() == expected.status().message());
  }
  if (!base.ok()) {
    Require(!base.status().message().empty());
    return 0;
  }
  CheckCanonical(*base);
  hammer::Result<Url> self = hammer::http::ResolveLocation(*base, base->ToString());
  Require(self.ok() && *self == *base);
  if (newline != std::string_view::npos) {
    hammer::Result<Url> resolved = hammer::http::ResolveLocation(*base, input.substr(newline + 1));
    if (resolved.ok()) CheckCanonical(*resolved);
  }
  return 0;
}
