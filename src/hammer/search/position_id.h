// Position ids: the _id `--id-from-position` gives a document that has none, so that a task
// re-run over the same input (a Hadoop or Spark retry, a job run twice) overwrites the documents
// its earlier attempt indexed instead of adding copies with server-generated ids.
//
// The id is "SOURCE:LINE": SOURCE names the input (the split "FILE:START" in a Hadoop map task,
// HAMMER_INPUT_NAME when set, else the input path as given, "-" for standard input) and LINE is
// the 1-based line number, within that input, of the document (of its action line for
// action+source input). Both are the same in every attempt that reads the same input, and
// differ between files and between the splits of one file, so the ids are stable across
// retries and distinct across a job. It is readable on purpose: an id names where its document
// came from.
//
// Errors: none here; BulkInputParser rejects a document whose position id is longer than
// kMaxIdBytes (the server's limit on _id). Threads: pure and reentrant.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace hammer::search {

// Elasticsearch and OpenSearch refuse an _id longer than 512 bytes (UTF-8).
inline constexpr size_t kMaxIdBytes = 512;

// "SOURCE:LINE".
std::string PositionId(std::string_view source, uint64_t line);

// Appends `action_line` with "_id": `id` as the first field of its metadata object:
// {"index":{"routing":"r"}} becomes {"index":{"_id":"ID","routing":"r"}}. Requires a valid
// action line (BulkInputParser checked it) whose metadata has no _id.
void AppendActionWithId(std::string* out, std::string_view action_line, std::string_view id);

}  // namespace hammer::search
