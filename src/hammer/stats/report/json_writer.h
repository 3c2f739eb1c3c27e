// JsonWriter: appends JSON text value by value, exactly as nlohmann::ordered_json's dump prints
// the same document (dump(2) when pretty, dump(-1) otherwise; ensure_ascii off, bytes that are
// not UTF-8 replaced with U+FFFD), without building the document as a tree.
//
// A summary with 10,000 key rows cost about 38,000 instructions a row through nlohmann's
// objects (each row an ordered map of maps, copied into the tree, then dumped); written here it
// costs a few thousand. The summaries keep nlohmann for their handful of header fields and use
// this for what grows with the keys.
//
// `depth` and `continuing` let a writer go on inside containers something else opened: depth 1,
// continuing: the members of an object whose "{" and first members are already written, as
// nlohmann printed them. The writer does not check the document's shape (a key where a value
// belongs); callers write well-formed sequences. Not thread-safe.
//
// The writer appends through a cursor into room it makes in `*out` ahead of the text (a resize
// at a time, not an append per piece: a 10,000-row summary writes 200,000 pieces), so `*out`
// holds exactly the text written only after Finish() or the writer's end; in between it may
// end with room not yet written. Read or append to `*out` directly only then; the writer may
// go on after such appends.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace hammer::stats {

// A member name written in the source: the compiler checks that it is printable ASCII without
// '"' or '\\' (written as it is, RFC 8259 section 7) and at most kMaxSize bytes, and stores it
// quoted, with its colon. A summary writes a dozen such names a key row; each is then one copy.
class JsonName {
 public:
  static constexpr size_t kMaxSize = 32;
  // Not explicit: writer.Key("p50_us") reads as it prints. A name that fails the check does
  // not compile (the throw is not a constant expression).
  consteval JsonName(const char* name) {  // NOLINT(google-explicit-constructor)
    size_t size = 0;
    text_[size++] = '"';
    for (const char* c = name; *c != '\0'; ++c) {
      if (*c < 0x20 || *c > 0x7e || *c == '"' || *c == '\\' || size > kMaxSize) {
        throw "a JsonName is printable ASCII without '\"' or '\\', at most kMaxSize bytes";
      }
      text_[size++] = *c;
    }
    text_[size++] = '"';
    text_[size++] = ':';
    text_[size] = ' ';
    size_ = static_cast<uint8_t>(size);
  }
  static constexpr size_t kBytes = kMaxSize + 4;  // '"', the name, '"', ':' and a space
  // "name": (compact) or "name": followed by a space (pretty).
  std::string_view quoted(bool pretty) const {
    return std::string_view(text_, size_ + (pretty ? 1 : 0));
  }
  // All kBytes bytes, the quoted name first: a copy of a size the compiler knows.
  const char* bytes() const { return text_; }

 private:
  char text_[kBytes] = {};
  uint8_t size_ = 0;
};

class JsonWriter {
 public:
  JsonWriter(std::string* out, bool pretty, int depth = 0, bool continuing = false);
  // Pretty only: a container opened inside `depth` or more open containers is written on one
  // line, its members separated by ", " (each name followed by ": ", as pretty): a summary's
  // key rows, one to a line, so that grep finds a URL's row whole. Before the first value.
  void OneLineFrom(size_t depth) { one_line_from_ = depth; }
  ~JsonWriter() { Finish(); }
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;

  // Leaves `*out` holding exactly the text written so far. Writing may go on after it, after
  // whatever else was appended to `*out` meanwhile.
  void Finish();

  void BeginObject() { Open('{'); }
  void EndObject() { Close('}'); }
  void BeginArray() { Open('['); }
  void EndArray() { Close(']'); }
  // An object member's name; its value comes next. KeyText for a name known only at run time
  // (it is checked and escaped as a string value is).
  void Key(const JsonName& name);
  void KeyText(std::string_view name);
  void String(std::string_view text);
  void Uint(uint64_t value);
  void Int(int64_t value);
  void Double(double value);  // as nlohmann prints it: shortest round trip, "null" if not finite
  void Bool(bool value);
  // A bool is not a number in JSON: Uint(flag) would print 0 or 1 where a reader expects
  // true or false.
  void Uint(bool) = delete;
  void Int(bool) = delete;
  void Null();

 private:
  // Indentation up to this many spaces is one copy of a size the compiler knows.
  static constexpr size_t kIndentCopy = 32;

  // At least `bytes` bytes of room at the cursor.
  char* Room(size_t bytes) {
    if (cur_ == nullptr || static_cast<size_t>(end_ - cur_) < bytes) Grow(bytes);
    return cur_;
  }
  // Takes up `*out` again after Finish (or at the first piece), and makes room.
  void Grow(size_t bytes);
  void Advance(char* end) { cur_ = end; }
  // The room a separator needs: ",", a newline and the indentation (two spaces a level).
  size_t SeparatorBytes() const { return 2 + std::max(kIndentCopy, 2 * empty_.size()); }
  // Writes what comes before the open container's next member or element at `p` (nothing for
  // the top-level value; "," and, pretty, a newline and indentation; no "," before the first)
  // and marks the container as no longer empty. Needs SeparatorBytes() of room.
  char* PutSeparator(char* p);
  // Room for a value of up to `bytes` bytes and what comes before it (after a key: nothing).
  char* BeginValue(size_t bytes);
  void Open(char bracket);
  void Close(char bracket);
  void Put(std::string_view text);
  void AppendString(std::string_view text);

  std::string* out_;
  // From the first piece to Finish: the cursor in *out_ and the end of the room made there
  // (null otherwise).
  char* cur_ = nullptr;
  char* end_ = nullptr;
  bool pretty_;
  // Open containers at which members go on one line (OneLineFrom); none by default.
  size_t one_line_from_ = std::numeric_limits<size_t>::max();
  bool after_key_ = false;
  // Per open container: 1 while nothing is written in it (a string: no allocation for the
  // depths a summary reaches).
  std::string empty_;
};

}  // namespace hammer::stats
