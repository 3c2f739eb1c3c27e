// JSON text helpers for the bulk path: quoting strings the way a JSON parser reads them back.
//
// AppendJsonString writes `text` as a JSON string literal (with the quotes). Quotes, backslashes
// and control characters are escaped; valid UTF-8 is copied as is; a byte that is not part of
// valid UTF-8 becomes \ufffd, because JSON text must be UTF-8 (the only lossy case; dead-letter
// files note it by the replacement character).
//
// Errors: none. Threads: pure and reentrant.
#pragma once

#include <string>
#include <string_view>

namespace hammer::search {

void AppendJsonString(std::string* out, std::string_view text);

// AppendJsonString into a new string.
std::string JsonString(std::string_view text);

}  // namespace hammer::search
