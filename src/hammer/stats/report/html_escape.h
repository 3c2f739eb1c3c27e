// Text for HTML documents built by hand (the HTML report): everything a user controls (keys are
// URLs from input files) goes through AppendHtmlEscaped before it reaches the page.
#pragma once

#include <string>
#include <string_view>

namespace hammer::stats {

// Appends `text` escaped for HTML element content and for quoted attribute values alike:
// & < > " ' become character references; bytes that are not valid UTF-8, and control characters
// other than TAB, LF and CR, become U+FFFD. The result never ends a <script>, a comment or an
// attribute early.
void AppendHtmlEscaped(std::string& out, std::string_view text);
std::string HtmlEscape(std::string_view text);

// Length in bytes of the valid UTF-8 sequence starting at text[0] (1-4), or 0 when the bytes
// there are not one (overlong forms, surrogates and code points above U+10FFFF included).
size_t Utf8SequenceLength(std::string_view text);

}  // namespace hammer::stats
