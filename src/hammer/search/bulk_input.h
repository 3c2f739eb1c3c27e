// BulkInputParser: turns NDJSON input lines into bulk documents, or into rejections with a
// reason. Shared by `hammer route` and `hammer bulk`.
//
// Input formats (InputOptions::format):
//  * kActionPairs: a `_bulk` body. An action line ({"index"|"create"|"update"|"delete": {...}})
//    followed by its source line (none for delete). _id, routing (or _routing) and _index are
//    read from the action.
//  * kDocuments: one document source (a JSON object) per line. The _id comes from the field
//    `id_field` (a dotted path, string or integer value), the routing from `routing_field`
//    when given; the action line is built: {"<op>":{"_id":"…"[,"routing":"…"]}}.
// With `position_source` (--id-from-position), a document without an _id gets the position id
// "SOURCE:LINE" (position_id.h): kActionPairs, an index or create action without _id (the
// action line sent gets the _id added); kDocuments, a document without the id field (one whose
// id field holds something else is still rejected). An update or delete without _id is left to
// the server, which refuses it.
// With `from_route`, every line is what `hammer route` writes (route_line.h): "KEY<TAB>PAYLOAD";
// the key is checked (an integer ≥ -1) and the payload is read as above, self-contained on one
// line.
//
// What is rejected, each as one InputRejection (one document) with the line(s) involved:
// invalid JSON (simdjson's message), an action that is not one of the four operations, a source
// that is not a JSON object, an action at the end of input without its source, a missing or
// non-string/integer id field (kDocuments: ids are promised, so a document without one is never
// sent with a server-generated id, unless position_source gives it one), a position id over
// kMaxIdBytes, a malformed route key. After an invalid action line the
// next line is taken as its source unless it is itself a valid action, so one bad pair costs
// one rejection, not two. Blank lines are skipped.
//
// Ownership: the string_views of a BulkDocument point into the line passed to Feed() or into
// the parser, and are valid until the next Feed()/Finish(). Rejections own their text.
// Threads: one parser per thread (it holds a simdjson parser and scratch buffers).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace hammer::search {

enum class BulkOp : uint8_t { kIndex, kCreate, kUpdate, kDelete };

// "index", "create", "update", "delete".
std::string_view BulkOpName(BulkOp op);

enum class InputFormat : uint8_t { kActionPairs, kDocuments };

struct InputOptions {
  InputFormat format = InputFormat::kActionPairs;
  bool from_route = false;
  std::string id_field;                 // kDocuments: required; dotted path ("user.id")
  std::string routing_field;            // kDocuments: optional; a missing field means no routing
  BulkOp document_op = BulkOp::kIndex;  // kDocuments: kIndex or kCreate
  std::optional<std::string> position_source;  // set: documents without _id get SOURCE:LINE
};

struct BulkDocument {
  BulkOp op = BulkOp::kIndex;
  std::string_view action;  // the action line to send (original, or built for kDocuments)
  std::string_view source;  // the source line; empty for delete
  bool has_source = false;
  // The line as read, for kDocuments: what `hammer route` writes back as the payload.
  std::string_view document_line;
  std::optional<std::string_view> id;       // decoded _id
  bool id_unusable = false;                 // _id present but not a string or integer
  std::optional<std::string_view> routing;  // decoded routing (empty = none)
  std::optional<std::string_view> index;    // _index of the action
  std::optional<int64_t> route_key;         // from_route: the key the line carried
  uint64_t line = 0;                        // input line number (of the action line)
};

struct InputRejection {
  std::string reason;
  std::string action;  // the (first) line as read
  std::string source;  // the following line when it belonged to the same document, else ""
  uint64_t line = 0;
};

class BulkInputParser {
 public:
  class Sink {
   public:
    virtual ~Sink() = default;
    virtual void OnDocument(const BulkDocument& document) = 0;
    virtual void OnRejected(InputRejection rejection) = 0;
  };

  explicit BulkInputParser(InputOptions options);
  ~BulkInputParser();
  BulkInputParser(const BulkInputParser&) = delete;
  BulkInputParser& operator=(const BulkInputParser&) = delete;

  // One input line without its '\n'. Calls the sink zero, one or two times (a pending invalid
  // action followed by a delete action gives a rejection and a document).
  void Feed(std::string_view line, uint64_t line_number, Sink* sink);
  // End of input: an action still waiting for its source is rejected.
  void Finish(Sink* sink);

  const InputOptions& options() const { return options_; }

 private:
  struct Json;
  struct Action {
    BulkOp op = BulkOp::kIndex;
    std::optional<std::string> id;
    bool id_unusable = false;
    std::optional<std::string> routing;
    std::optional<std::string> index;
  };
  struct Pending {
    std::string line;
    uint64_t line_number = 0;
    std::optional<Action> action;  // nullopt: the line was not a valid action
    std::string error;             // why, when !action
  };

  // The position id of the document at `line_number`, or a rejection reason when it is too long.
  std::optional<std::string> MakePositionId(uint64_t line_number);
  // Parses an action line; an error message when it is not a valid action.
  std::optional<std::string> ParseAction(std::string_view line, Action* action);
  // "" when `line` is a JSON object, else the reason.
  std::string CheckSource(std::string_view line);
  void FeedPairs(std::string_view line, uint64_t line_number, Sink* sink);
  void FeedActionLine(std::string_view line, uint64_t line_number, Sink* sink);
  void FeedDocument(std::string_view line, uint64_t line_number, std::optional<int64_t> key,
                    Sink* sink);
  void FeedRouteLine(std::string_view line, uint64_t line_number, Sink* sink);
  void EmitPair(const Action& action, std::string_view action_line, std::string_view source,
                bool has_source, uint64_t line_number, std::optional<int64_t> key, Sink* sink);

  InputOptions options_;
  std::unique_ptr<Json> json_;
  std::optional<Pending> pending_;
  std::string built_action_;  // kDocuments, or an action given its position id
  std::string position_id_;   // the position id of the document being emitted
  Action scratch_action_;
};

}  // namespace hammer::search
