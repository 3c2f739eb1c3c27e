#include "hammer/stats/key_template.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

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

// Writes a template into `out` from out[start]: the bytes of `text` as they are, except the
// spans replaced by "{id}". Unchanged runs are copied whole, when the next replacement or the end
// comes, into room made once: a template is at most 5 times its text (a replaced span is a
// non-empty segment, or a parameter value after its own '=', which is kept). `out` only grows:
// a buffer kept between keys is not zero-filled again for each. Finish ends every writer and
// says where the template ends in `out` (the caller cuts or copies it).
class TemplateWriter {
 public:
  TemplateWriter(std::string_view text, std::string* out, size_t start) : text_(text) {
    if (out->size() < start + 5 * text.size()) out->resize(start + 5 * text.size());
    begin_ = out->data();
    end_ = begin_ + start;
  }

  // text[begin, end) becomes "{id}"; `begin` is at or after where the last span ended.
  void ReplaceWithId(size_t begin, size_t end) {
    Copy(begin);
    std::memcpy(end_, kId.data(), kId.size());
    end_ += kId.size();
    copied_ = end;
  }
  // Copies the rest up to text[end], where the template ends; returns the template's end in out.
  size_t Finish(size_t end) {
    Copy(end);
    return static_cast<size_t>(end_ - begin_);
  }
  // The template's size so far (from out[0]) if it ended at text[pos].
  size_t size_at(size_t pos) const { return static_cast<size_t>(end_ - begin_) + (pos - copied_); }

 private:
  void Copy(size_t up_to) {
    std::memcpy(end_, text_.data() + copied_, up_to - copied_);
    end_ += up_to - copied_;
  }

  std::string_view text_;
  char* begin_;        // out's bytes
  char* end_;          // where the next byte goes
  size_t copied_ = 0;  // text before this is written
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

// Where a key's path starts: after "METHOD " (a space before the first '/'), after
// "scheme://authority" (the first '/' is the one of "://"), or at the first '/'. npos when the
// key has no '/' at all (a host, a name: nothing to template).
size_t PathStart(std::string_view key) {
  size_t slash = 0;
  size_t space = std::string_view::npos;
  for (; slash < key.size(); ++slash) {
    uint16_t c = ClassOf(key[slash]);
    if (c & kSlash) break;
    if ((c & kSpace) && space == std::string_view::npos) space = slash;
  }
  if (slash == key.size()) return std::string_view::npos;
  size_t prefix = space == std::string_view::npos ? 0 : space + 1;
  if (slash > prefix && key[slash - 1] == ':' && slash + 1 < key.size() && key[slash + 1] == '/') {
    prefix = slash + 2;
    while (prefix < key.size() && !(ClassOf(key[prefix]) & (kSlash | kQuestion | kHash)))
      ++prefix;
  }
  return prefix;
}

// The template of `key` whose path starts at key[path]: what comes before stays, identifier
// segments of the path and every query value become "{id}", a fragment is dropped. Written from
// out[0]; returns its size (out may be longer).
size_t TemplateFrom(std::string_view key, size_t path, std::string* out) {
  TemplateWriter writer(key, out, 0);
  const size_t query = TemplatePath(writer, key, path, std::string::npos);
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
  return writer.Finish(i);  // the fragment, if any, is dropped
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
  TemplateWriter writer(path, &key, key.size());
  key.resize(writer.Finish(TemplatePath(writer, path, 0, kMaxKeyBytes)));
  if (key.size() > kMaxKeyBytes) key.resize(kMaxKeyBytes);
  return key;
}

std::string KeyTemplate(std::string_view key) {
  std::string out;
  KeyTemplate(key, &out);
  return out;
}

void KeyTemplate(std::string_view key, std::string* out) {
  size_t path = PathStart(key);
  if (path == std::string_view::npos) {
    out->assign(key);
  } else {
    out->resize(TemplateFrom(key, path, out));
  }
}

void KeyTemplater::Template(std::string_view key, std::string* out) {
  // The same text before a '/' finds the same path start: the first '/', the space before it
  // and the authority after "://" all lie in that text, and the '/' ends the authority.
  const size_t known = prefix_.size();
  // TemplateFrom may reallocate buffer_: its data() is read once the template is written.
  if (known_ && key.size() > known && key[known] == '/' && key.starts_with(prefix_)) {
    const size_t end = TemplateFrom(key, known, &buffer_);
    out->assign(buffer_.data(), end);
    return;
  }
  size_t path = PathStart(key);
  if (path == std::string_view::npos) {
    out->assign(key);
    return;
  }
  prefix_.assign(key.substr(0, path));
  known_ = true;
  const size_t end = TemplateFrom(key, path, &buffer_);
  out->assign(buffer_.data(), end);
}

}  // namespace hammer::stats
