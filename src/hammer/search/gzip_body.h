// GzipCompress: a request body as gzip (RFC 1952) for "Content-Encoding: gzip" (`--gzip`),
// with zlib. Level 1 by default: bulk bodies are repetitive JSON, and the fastest level already
// removes most of the bytes at a fraction of the CPU of the default level.
//
// Errors: a zlib failure (out of memory) is returned as a Status; *out is then unspecified.
// Threads: reentrant.
#pragma once

#include <string>
#include <string_view>

#include "hammer/base/status.h"

namespace hammer::search {

Status GzipCompress(std::string_view input, std::string* out, int level = 1);

}  // namespace hammer::search
