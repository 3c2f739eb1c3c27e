#include "hammer/stats/key_template.h"

#include <array>
#include <cstddef>
#include <cstdint>

namespace hammer::stats {
namespace {

constexpr std::string_view kId = "{id}";

// Character classes, looked up once per byte: every key past --max-keys is templated, so the
// scan is one pass with a table lookup per byte instead of a search per delimiter.
enum CharClass : uint16_t {
  kDigit = 1 << 0,
  kHexDigit = 1 << 1,
  kSlash = 1 << 2,
  kQuestion = 1 << 3,
  kHash = 1 << 4,
  kAmpersand = 1 << 5,
  kEquals = 1 << 6,
  kSpace = 1 << 7,
  kDot = 1 << 8,
};

constexpr std::array<uint16_t, 256> kClasses = [] {
  std::array<uint16_t, 256> classes{};
  for (int c = '0'; c <= '9'; ++c)
    classes[c] = kDigit | kHexDigit;
  for (int c = 'a'; c <= 'f'; ++c)
    classes[c] = kHexDigit;
  for (int c = 'A'; c <= 'F'; ++c)
    classes[c] = kHexDigit;
  classes['/'] = kSlash;
  classes['?'] = kQuestion;
  classes['#'] = kHash;
  classes['&'] = kAmpersand;
  classes['='] = kEquals;
  classes[' '] = kSpace;
  classes['.'] = kDot;
  return classes;
}();

uint16_t ClassOf(char c) {
  return kClasses[static_cast<unsigned char>(c)];
}

// What one pass over a segment's bytes found: the classes all of them have, and any has.
struct SegmentClasses {
  uint16_t all = kDigit | kHexDigit;
  uint16_t any = 0;
  void Add(uint16_t c) {
    all &= c;
    any |= c;
  }
};

SegmentClasses ClassesOf(std::string_view s) {
  SegmentClasses classes;
  for (char c : s)
    classes.Add(ClassOf(c));
  return classes;
}

bool IsIdentifier(std::string_view segment, SegmentClasses classes) {
  if (segment.empty()) return false;
  if (classes.all & kDigit) return true;
  if (segment.size() == 36) {  // 8-4-4-4-12
    for (size_t i = 0; i < 36; ++i) {
      bool dash = i == 8 || i == 13 || i == 18 || i == 23;
      if (dash ? segment[i] != '-' : !(ClassOf(segment[i]) & kHexDigit)) return false;
    }
    return true;
  }
  return segment.size() >= 16 && (classes.all & kHexDigit);
}

// Writes a template into `out`: the bytes of `text` as they are, except the spans replaced by
// "{id}". Unchanged runs are copied whole, when the next replacement or the end comes.
class TemplateWriter {
 public:
  TemplateWriter(std::string_view text, std::string* out) : text_(text), out_(out) {}

  // text[begin, end) becomes "{id}"; `begin` is at or after where the last span ended.
  void ReplaceWithId(size_t begin, size_t end) {
    out_->append(text_.data() + copied_, begin - copied_).append(kId);
    copied_ = end;
  }
  // Copies the rest up to text[end], where the template ends.
  void Finish(size_t end) { out_->append(text_.data() + copied_, end - copied_); }
  // The template's size so far if it ended at text[pos].
  size_t size_at(size_t pos) const { return out_->size() + (pos - copied_); }

 private:
  std::string_view text_;
  std::string* out_;
  size_t copied_ = 0;  // text before this is in *out_
};

// The segment text[begin, end) becomes "{id}" or "{id}.ext", or stays. `classes`: its bytes'.
void TemplateSegment(TemplateWriter& writer, std::string_view text, size_t begin, size_t end,
                     SegmentClasses classes) {
  std::string_view segment = text.substr(begin, end - begin);
  if (IsIdentifier(segment, classes)) {
    writer.ReplaceWithId(begin, end);
    return;
  }
  if (classes.any & kDot) {
    size_t dot = segment.rfind('.');
    std::string_view stem = segment.substr(0, dot);
    if (dot > 0 && IsIdentifier(stem, ClassesOf(stem))) writer.ReplaceWithId(begin, begin + dot);
  }
}

// The path that starts at text[i] (up to its first '?' or '#', or the end), identifier
// segments replaced, stopping early at a segment that starts once the template holds `limit`
// bytes. Returns where it stopped: the '?' or '#', the end, or that segment.
size_t TemplatePath(TemplateWriter& writer, std::string_view text, size_t i, size_t limit) {
  while (i < text.size() && writer.size_at(i) < limit) {
    uint16_t c = ClassOf(text[i]);
    if (c & (kQuestion | kHash)) break;
    if (c & kSlash) ++i;
    const size_t start = i;
    SegmentClasses classes;
    for (; i < text.size(); ++i) {
      c = ClassOf(text[i]);
      if (c & (kSlash | kQuestion | kHash)) break;
      classes.Add(c);
    }
    TemplateSegment(writer, text, start, i, classes);
  }
  return i;
}

}  // namespace

bool LooksLikeId(std::string_view segment) {
  return IsIdentifier(segment, ClassesOf(segment));
}

std::string EndpointKey(std::string_view method, std::string_view target) {
  constexpr size_t kMaxKeyBytes = 256;
  std::string_view path = target.substr(0, target.find_first_of("?#"));
  if (size_t scheme = path.find("://"); scheme != std::string_view::npos && path[0] != '/') {
    size_t slash = path.find('/', scheme + 3);
    path = slash == std::string_view::npos ? std::string_view("/") : path.substr(slash);
  }
  std::string key(method);
  key += ' ';
  if (path.empty()) path = "/";
  TemplateWriter writer(path, &key);
  writer.Finish(TemplatePath(writer, path, 0, kMaxKeyBytes));
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
  // Where the path starts: after "METHOD " (a space before the first '/'), after
  // "scheme://authority" (the first '/' is the one of "://"), or at the first '/'. No '/' at
  // all (a host, a name): nothing to template.
  size_t slash = 0;
  size_t space = std::string_view::npos;
  for (; slash < key.size(); ++slash) {
    uint16_t c = ClassOf(key[slash]);
    if (c & kSlash) break;
    if ((c & kSpace) && space == std::string_view::npos) space = slash;
  }
  if (slash == key.size()) {
    out.assign(key);
    return;
  }
  size_t prefix = space == std::string_view::npos ? 0 : space + 1;
  if (slash > prefix && key[slash - 1] == ':' && slash + 1 < key.size() && key[slash + 1] == '/') {
    prefix = slash + 2;
    while (prefix < key.size() && !(ClassOf(key[prefix]) & (kSlash | kQuestion | kHash)))
      ++prefix;
  }
  out.clear();
  TemplateWriter writer(key, &out);
  const size_t query = TemplatePath(writer, key, prefix, std::string::npos);
  size_t i = query;
  if (query < key.size() && key[query] == '?') {
    // Each parameter: "name=value" becomes "name={id}"; a bare "12345" "{id}", "debug" stays.
    do {
      const size_t start = ++i;
      size_t equals = std::string_view::npos;
      SegmentClasses classes;
      for (; i < key.size(); ++i) {
        uint16_t c = ClassOf(key[i]);
        if (c & (kAmpersand | kHash)) break;
        if ((c & kEquals) && equals == std::string_view::npos) equals = i;
        classes.Add(c);
      }
      if (equals != std::string_view::npos) {
        writer.ReplaceWithId(equals + 1, i);
      } else {
        TemplateSegment(writer, key, start, i, classes);
      }
    } while (i < key.size() && key[i] == '&');
  }
  writer.Finish(i);  // the fragment, if any, is dropped
}

}  // namespace hammer::stats
