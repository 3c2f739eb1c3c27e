#include "hammer/stats/key_template.h"

#include <algorithm>

#include "hammer/base/strings.h"

namespace hammer::stats {
namespace {

constexpr std::string_view kId = "{id}";

bool IsDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool IsHex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

bool IsIdentifier(std::string_view segment) {
  if (IsDigits(segment)) return true;
  if (segment.size() == 36) {  // 8-4-4-4-12
    for (size_t i = 0; i < 36; ++i) {
      bool dash = i == 8 || i == 13 || i == 18 || i == 23;
      if (dash ? segment[i] != '-' : !IsHex(segment[i])) return false;
    }
    return true;
  }
  return segment.size() >= 16 && std::all_of(segment.begin(), segment.end(), IsHex);
}

// The segment's template: "{id}", "{id}.ext", or the segment itself.
void AppendSegment(std::string& out, std::string_view segment) {
  if (IsIdentifier(segment)) {
    out += kId;
    return;
  }
  size_t dot = segment.rfind('.');
  if (dot != std::string_view::npos && dot > 0 && IsIdentifier(segment.substr(0, dot))) {
    out += kId;
    out += segment.substr(dot);
    return;
  }
  out += segment;
}

// Appends `path` ("/a/7/b", or "" ) with identifier segments replaced, stopping once `out`
// holds `limit` bytes.
void AppendPathTemplate(std::string& out, std::string_view path, size_t limit) {
  while (!path.empty() && out.size() < limit) {
    size_t next = path.find('/', 1);
    std::string_view segment = path.substr(0, next);  // "/name" (or "name" if no leading '/')
    bool slash = segment.front() == '/';
    if (slash) out += '/';
    AppendSegment(out, slash ? segment.substr(1) : segment);
    if (next == std::string_view::npos) break;
    path.remove_prefix(next);
  }
}

}  // namespace

bool LooksLikeId(std::string_view segment) {
  return IsIdentifier(segment);
}

std::string EndpointKey(std::string_view method, std::string_view target) {
  constexpr size_t kMaxKeyBytes = 256;
  size_t end = FindFirstOf(target, "?#");
  std::string_view path = target.substr(0, end);
  if (size_t scheme = path.find("://"); scheme != std::string_view::npos && path[0] != '/') {
    size_t slash = path.find('/', scheme + 3);
    path = slash == std::string_view::npos ? std::string_view("/") : path.substr(slash);
  }
  std::string key(method);
  key += ' ';
  if (path.empty()) path = "/";
  AppendPathTemplate(key, path, kMaxKeyBytes);
  if (key.size() > kMaxKeyBytes) key.resize(kMaxKeyBytes);
  return key;
}

std::string KeyTemplate(std::string_view key) {
  std::string out;
  KeyTemplate(key, &out);
  return out;
}

void KeyTemplate(std::string_view key, std::string* result) {
  std::string& out = *result;
  // Where the path starts: after "METHOD " (a space before any '/'), after "scheme://authority",
  // or at the first '/'. No '/' at all (a host, a name): nothing to template.
  size_t slash = key.find('/');
  if (slash == std::string_view::npos) {
    out.assign(key);
    return;
  }
  size_t prefix = 0;
  if (size_t space = key.find(' '); space != std::string_view::npos && space < slash) {
    prefix = space + 1;
  }
  if (size_t scheme = key.find("://", prefix);
      scheme != std::string_view::npos && scheme + 1 == key.find('/', prefix)) {
    size_t authority_end = FindFirstOf(key, "/?#", scheme + 3);
    prefix = authority_end == std::string_view::npos ? key.size() : authority_end;
  }
  out.assign(key.substr(0, prefix));
  std::string_view rest = key.substr(prefix);
  size_t query = FindFirstOf(rest, "?#");
  AppendPathTemplate(out, rest.substr(0, query), std::string::npos);
  if (query == std::string_view::npos || rest[query] == '#') return;
  std::string_view params = rest.substr(query + 1);
  params = params.substr(0, params.find('#'));
  out += '?';
  bool first = true;
  while (true) {
    size_t amp = params.find('&');
    std::string_view param = params.substr(0, amp);
    if (!first) out += '&';
    first = false;
    size_t equals = param.find('=');
    if (equals != std::string_view::npos) {
      out += param.substr(0, equals + 1);
      out += kId;
    } else {
      AppendSegment(out, param);  // "?12345" -> "?{id}"; "?debug" stays
    }
    if (amp == std::string_view::npos) break;
    params.remove_prefix(amp + 1);
  }
}

}  // namespace hammer::stats
