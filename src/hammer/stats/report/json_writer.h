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
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

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
  // "name": (compact) or "name": followed by a space (pretty).
  std::string_view quoted(bool pretty) const {
    return std::string_view(text_, size_ + (pretty ? 1 : 0));
  }

 private:
  char text_[kMaxSize + 4] = {};  // '"', the name, '"', ':', and the space of the pretty form
  uint8_t size_ = 0;
};

class JsonWriter {
 public:
  JsonWriter(std::string* out, bool pretty, int depth = 0, bool continuing = false);

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
  // Before a value (after a key: nothing; else the container's separator and indentation).
  void BeforeValue();
  // Marks the open container as no longer empty and returns what comes before its next member
  // or element: "," and, pretty, a newline and indentation ("\n" and indentation before the
  // first). Indentation past 32 levels is Separate's to add.
  std::string_view Separator();
  void Separate();
  void Open(char bracket);
  void Close(char bracket);
  void AppendString(std::string_view text);

  std::string* out_;
  bool pretty_;
  bool after_key_ = false;
  std::vector<uint8_t> empty_;  // per open container: 1 while nothing is written in it
};

}  // namespace hammer::stats
