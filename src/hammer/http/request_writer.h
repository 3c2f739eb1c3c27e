// Request serialization. A load run sends the same few requests millions of times, so heads
// are built once per target (PreparedRequest) and written as-is; nothing is formatted per send.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hammer/base/status.h"
#include "hammer/http/url.h"

namespace hammer::http {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

// Default headers hammer adds unless the user gives their own: Host, User-Agent, Accept. The body
// is always framed by hammer's Content-Length (written when there is a body or the method
// usually carries one): a Content-Length or Transfer-Encoding among `headers` is left out.
std::string SerializeRequestHead(std::string_view method, const Url& url, const HeaderList& headers,
                                 size_t body_size);
// The same head written into `*head` (replacing what it held), reusing its capacity: a stream of
// distinct URLs prepares one head per line into the same scratch request.
void SerializeRequestHead(std::string_view method, const Url& url, const HeaderList& headers,
                          size_t body_size, std::string* head);

// Methods whose repetition has no extra effect (RFC 9110 §9.2.2): safe to retry.
bool IsIdempotentMethod(std::string_view method);

// Headers as users give them on a command line (-H/--header "Name: value", curl's syntax): the
// name is what precedes the first ':', the value what follows it without leading blanks. Errors
// (one line, naming the flag's text): no name or no ':'; a CR, LF or NUL anywhere (it would put
// other header lines or a second request on the wire); a name that is not an RFC 9110 token;
// Content-Length or Transfer-Encoding (the body's framing is the writer's); Host twice.
Result<HeaderList> ParseHeaderFlags(const std::vector<std::string>& flags);

// A method as a request line may carry it: an RFC 9110 token ("GET", "PURGE"), so no space,
// CR or LF can start another line.
bool IsMethodName(std::string_view text);

// `text` with CR, LF and NUL shown as \r, \n and \0, for error messages.
std::string EscapeControls(std::string_view text);

}  // namespace hammer::http
