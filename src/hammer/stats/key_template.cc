#include "hammer/stats/key_template.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "hammer/base/strings.h"

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

[[gnu::always_inline]] inline bool IsIdentifier(std::string_view segment, SegmentClasses classes) {
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

// Writes a template into `out`: the bytes of a text as they are, except the spans replaced by
// "{id}". Unchanged runs are copied whole, when the next replacement or the end comes. The
// caller makes the room: a template is at most 5 times its text (a replaced span is a non-empty
// segment, or a parameter value after its own '=', which is kept). Every key past --max-keys is
// templated: the scan is one pass over raw pointers, with a table lookup per byte, and all of
// it is inlined into the function that templates a key.
// The writer also records the replaced spans (the first KeyTemplater::kMaxSpans, and how many).
class TemplateWriter {
 public:
  using Span = internal::ReplacedSpan;

  // The template goes from out[start] (what comes before it counts in its size).
  TemplateWriter(const char* text, char* out, size_t start)
      : text_(text), copied_(text), out_(out), end_(out + start) {}

  // [begin, end) of the text becomes "{id}"; `begin` is at or after where the last span ended.
  void ReplaceWithId(const char* begin, const char* end, Span::Kind kind) {
    Copy(begin);
    std::memcpy(end_, kId.data(), kId.size());
    end_ += kId.size();
    copied_ = end;
    if (span_count_ < KeyTemplater::kMaxSpans) {
      spans_[span_count_] = {static_cast<uint32_t>(begin - text_),
                             static_cast<uint32_t>(end - text_), kind};
    }
    ++span_count_;
  }
  // Copies the rest of the text up to `end`, where the template ends; returns its end in out.
  size_t Finish(const char* end) {
    Copy(end);
    copied_ = end;
    return static_cast<size_t>(end_ - out_);
  }
  // After Finish: where the text the template kept ends.
  const char* copied() const { return copied_; }
  const Span* spans() const { return spans_; }
  size_t span_count() const { return span_count_; }
  // The template's size so far if it ended at `at` in the text.
  size_t size_at(const char* at) const {
    return static_cast<size_t>(end_ - out_) + static_cast<size_t>(at - copied_);
  }

 private:
  void Copy(const char* up_to) {
    const size_t n = static_cast<size_t>(up_to - copied_);
    std::memcpy(end_, copied_, n);
    end_ += n;
  }

  const char* text_;
  const char* copied_;  // the text before this is written
  char* out_;           // where the template starts
  char* end_;           // where its next byte goes
  Span spans_[KeyTemplater::kMaxSpans];
  size_t span_count_ = 0;
};

// The segment [begin, end) becomes "{id}" or "{id}.ext", or stays. `classes`: its bytes'.
// `kind`: what a whole replaced segment counts as (a path segment, or kOther for a parameter).
[[gnu::always_inline]] inline void TemplateSegment(TemplateWriter& writer, const char* begin,
                                                   const char* end, SegmentClasses classes,
                                                   TemplateWriter::Span::Kind kind) {
  std::string_view segment(begin, static_cast<size_t>(end - begin));
  if (IsIdentifier(segment, classes)) {
    writer.ReplaceWithId(begin, end, kind);
    return;
  }
  if (classes.any & kDot) {
    size_t dot = segment.rfind('.');
    std::string_view stem = segment.substr(0, dot);
    if (dot > 0 && IsIdentifier(stem, ClassesOf(stem))) {
      writer.ReplaceWithId(begin, begin + dot, TemplateWriter::Span::Kind::kOther);
    }
  }
}

// The bytes that end a path segment.
constexpr uint16_t kSegmentEnd = kSlash | kQuestion | kHash;

// Where the part of a key that starts at `p` ends: at its first byte of a class in `stop`, or
// `end`; the classes of the bytes before it are added to `classes`. A path segment ends at
// kSegmentEnd, a query parameter's name at '&', '#' or '='.
[[gnu::always_inline]] inline const char* PartEnd(const char* p, const char* end, uint16_t stop,
                                                  SegmentClasses* classes) {
  for (; p < end; ++p) {
    const uint16_t c = ClassOf(*p);
    if (c & stop) break;
    classes->Add(c);
  }
  return p;
}

// Where the query value that starts at `p` ends: at its '&' or '#', or `end`.
[[gnu::always_inline]] inline const char* ValueEnd(const char* p, const char* end) {
  while (p < end && !(ClassOf(*p) & (kAmpersand | kHash)))
    ++p;
  return p;
}

// The path that starts at `p` (up to its first '?' or '#', or `end`), identifier segments
// replaced, stopping early at a segment that starts once the template holds `limit` bytes
// (kLimited). Returns where it stopped: the '?' or '#', `end`, or that segment.
template <bool kLimited>
[[gnu::always_inline]] inline const char* TemplatePath(TemplateWriter& writer, const char* p,
                                                       const char* end, size_t limit) {
  while (p < end && (!kLimited || writer.size_at(p) < limit)) {
    uint16_t c = ClassOf(*p);
    if (c & (kQuestion | kHash)) break;
    if (c & kSlash) ++p;
    const char* start = p;
    SegmentClasses classes;
    p = PartEnd(p, end, kSegmentEnd, &classes);
    TemplateSegment(writer, start, p, classes, TemplateWriter::Span::Kind::kSegment);
  }
  return p;
}

// Where a key's path starts: after "METHOD " (a space before the first '/'), after
// "scheme://authority" (the first '/' is the one of "://"), or at the first '/'. npos when the
// key has no '/' before its query or fragment, if any (a host, a name: nothing to template; a
// '/' inside a query value is not a path, and looking for one there would find another path
// start in the template, where that value is "{id}", so KeyTemplate would not be idempotent).
size_t PathStart(std::string_view key) {
  size_t slash = 0;
  size_t space = std::string_view::npos;
  for (; slash < key.size(); ++slash) {
    uint16_t c = ClassOf(key[slash]);
    if (c & kSlash) break;
    if (c & (kQuestion | kHash)) return std::string_view::npos;
    if ((c & kSpace) && space == std::string_view::npos) space = slash;
  }
  if (slash == key.size()) return std::string_view::npos;
  size_t prefix = space == std::string_view::npos ? 0 : space + 1;
  if (slash > prefix && key[slash - 1] == ':' && slash + 1 < key.size() && key[slash + 1] == '/') {
    prefix = slash + 2;
    while (prefix < key.size() && !(ClassOf(key[prefix]) & kSegmentEnd))
      ++prefix;
  }
  return prefix;
}

// The template of `key` whose path starts at key[path]: what comes before stays, identifier
// segments of the path and every query value become "{id}", a fragment is dropped. Written from
// `writer`'s out, which has room for 5 * key.size() bytes; returns its size.
size_t TemplateFrom(std::string_view key, size_t path, TemplateWriter& writer) {
  const char* p = key.data() + path;
  const char* const end = key.data() + key.size();
  p = TemplatePath<false>(writer, p, end, 0);
  if (p < end && *p == '?') {
    // Each parameter: "name=value" becomes "name={id}"; a bare "12345" "{id}", "debug" stays.
    // The name is scanned for its classes (a bare parameter is one segment), a value only for
    // its end: it is replaced whatever it holds.
    do {
      const char* start = ++p;
      SegmentClasses classes;
      p = PartEnd(p, end, kAmpersand | kHash | kEquals, &classes);
      if (p < end && *p == '=') {
        const char* value = ++p;
        p = ValueEnd(p, end);
        writer.ReplaceWithId(value, p, TemplateWriter::Span::Kind::kValue);
      } else {
        TemplateSegment(writer, start, p, classes, TemplateWriter::Span::Kind::kOther);
      }
    } while (p < end && *p == '&');
  }
  return writer.Finish(p);  // the fragment, if any, is dropped
}

// Makes `out` hold at least `size` bytes: it only grows, so a buffer kept between keys is not
// zero-filled again for each.
char* Room(std::string* out, size_t size) {
  if (out->size() < size) out->resize(size);
  return out->data();
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
  const size_t start = key.size();
  TemplateWriter writer(path.data(), Room(&key, start + 5 * path.size()), start);
  key.resize(writer.Finish(
      TemplatePath<true>(writer, path.data(), path.data() + path.size(), kMaxKeyBytes)));
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
    TemplateWriter writer(key.data(), Room(out, 5 * key.size()), 0);
    out->resize(TemplateFrom(key, path, writer));
  }
}

void KeyTemplater::Template(std::string_view key, std::string* out) {
  // The same text before a '/' finds the same path start: the first '/', the space before it
  // and the authority after "://" all lie in that text, and the '/' ends the authority.
  const size_t known = prefix_.size();
  size_t path = known;
  if (!known_ || key.size() <= known || key[known] != '/' ||
      !BytesEqual(key.data(), prefix_.data(), known)) {
    path = PathStart(key);
    if (path == std::string_view::npos) {
      out->assign(key);
      return;
    }
    prefix_.assign(key.substr(0, path));
    known_ = true;
    shaped_ = false;  // its path started elsewhere
  } else if (shaped_ && SameShape(key)) {
    AssignText(out, std::string_view(buffer_.data(), shaped_size_));
    return;
  }
  char* room = Room(&buffer_, 5 * key.size());
  TemplateWriter writer(key.data(), room, 0);
  const size_t size = TemplateFrom(key, path, writer);
  AssignText(out, std::string_view(room, size));
  // The new shape, when SameShape can check it.
  shaped_ = writer.copied() == key.data() + key.size() && writer.span_count() <= kMaxSpans &&
            key.size() < UINT32_MAX;
  for (size_t i = 0; shaped_ && i < writer.span_count(); ++i)
    shaped_ = writer.spans()[i].kind != internal::ReplacedSpan::Kind::kOther;
  if (!shaped_) return;
  AssignText(&shaped_key_, key);
  shaped_size_ = size;
  span_count_ = writer.span_count();
  std::copy(writer.spans(), writer.spans() + span_count_, spans_);
}

bool KeyTemplater::SameShape(std::string_view key) const {
  // Templating `key` would take the steps that templated shaped_key_: the kept text is the same
  // bytes, a replaced segment is again an identifier that ends where the kept text resumes (at
  // a '/', '?' or '#', or the end), and a replaced value ends at a '&' or the end as well. Its
  // template is then the same.
  const char* p = key.data() + prefix_.size();
  const char* const end = key.data() + key.size();
  size_t kept = prefix_.size();  // where the kept text resumes in shaped_key_
  for (size_t i = 0; i < span_count_; ++i) {
    const internal::ReplacedSpan& span = spans_[i];
    const size_t size = span.begin - kept;
    if (static_cast<size_t>(end - p) < size || !BytesEqual(p, shaped_key_.data() + kept, size))
      return false;
    p += size;
    const char* start = p;
    if (span.kind == internal::ReplacedSpan::Kind::kValue) {
      p = ValueEnd(p, end);
    } else {
      SegmentClasses classes;
      p = PartEnd(p, end, kSegmentEnd, &classes);
      if (!IsIdentifier(std::string_view(start, static_cast<size_t>(p - start)), classes))
        return false;
    }
    kept = span.end;
  }
  const size_t size = shaped_key_.size() - kept;
  return static_cast<size_t>(end - p) == size && BytesEqual(p, shaped_key_.data() + kept, size);
}

}  // namespace hammer::stats
