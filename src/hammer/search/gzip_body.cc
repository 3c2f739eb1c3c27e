#include "hammer/search/gzip_body.h"

#include <zlib.h>

namespace hammer::search {

Status GzipCompress(std::string_view input, std::string* out, int level) {
  z_stream stream{};
  // 15 window bits + 16: a gzip header and trailer instead of zlib's.
  if (deflateInit2(&stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return Status::Error("gzip: deflateInit2 failed");
  }
  out->resize(deflateBound(&stream, static_cast<uLong>(input.size())));
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data()));
  stream.avail_in = static_cast<uInt>(input.size());
  stream.next_out = reinterpret_cast<Bytef*>(out->data());
  stream.avail_out = static_cast<uInt>(out->size());
  const int result = deflate(&stream, Z_FINISH);
  const size_t written = stream.total_out;
  deflateEnd(&stream);
  if (result != Z_STREAM_END) return Status::Error("gzip: deflate did not finish");
  out->resize(written);
  return Status::Ok();
}

}  // namespace hammer::search
