#include "hammer/stats/record.h"

#include <charconv>

namespace hammer {

void AppendSanitizedKey(std::string& out, std::string_view key) {
  size_t start = out.size();
  out.append(key);
  for (size_t i = start; i < out.size(); ++i) {
    char c = out[i];
    if (c == '\t' || c == '\n' || c == '\r') out[i] = ' ';
  }
}

void AppendSuccessRecord(std::string& out, std::string_view key, int64_t micros) {
  AppendSanitizedKey(out, key);
  if (micros < 0) micros = 0;
  char buf[32];
  buf[0] = '\t';
  char* end = std::to_chars(buf + 1, buf + sizeof(buf), micros / 1000000).ptr;
  *end++ = '.';
  int64_t fraction = micros % 1000000;
  for (int digit = 5; digit >= 0; --digit) {
    end[digit] = static_cast<char>('0' + fraction % 10);
    fraction /= 10;
  }
  end += 6;
  *end++ = '\n';
  out.append(buf, end);
}

void AppendFailureRecord(std::string& out, std::string_view key) {
  AppendSanitizedKey(out, key);
  out.append("\t\n");
}

}  // namespace hammer
