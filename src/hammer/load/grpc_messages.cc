#include "hammer/load/grpc_messages.h"

#include <algorithm>

namespace hammer::load {

void GrpcMessageReader::Feed(std::string_view data) {
  while (!data.empty() && !malformed_) {
    if (message_left_ > 0) {
      const size_t take = static_cast<size_t>(std::min<uint64_t>(message_left_, data.size()));
      message_left_ -= take;
      data.remove_prefix(take);
      if (message_left_ == 0) ++messages_;
      continue;
    }
    const size_t take = std::min(kPrefixBytes - prefix_bytes_, data.size());
    std::copy_n(data.begin(), take, prefix_ + prefix_bytes_);
    prefix_bytes_ += take;
    data.remove_prefix(take);
    if (prefix_bytes_ < kPrefixBytes) return;
    prefix_bytes_ = 0;
    if (prefix_[0] > 1) {
      malformed_ = true;
      return;
    }
    message_left_ = uint64_t{prefix_[1]} << 24 | uint64_t{prefix_[2]} << 16 |
                    uint64_t{prefix_[3]} << 8 | uint64_t{prefix_[4]};
    if (message_left_ == 0) ++messages_;  // an empty message (a protobuf with every field unset)
  }
}

}  // namespace hammer::load
