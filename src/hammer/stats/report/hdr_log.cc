#include "hammer/stats/report/hdr_log.h"

#include <ctime>

#include "hammer/stats/report/hdr.h"

namespace hammer::stats {
namespace {

void AppendSeconds3(std::string& out, int64_t ms) {
  AppendJavaFixed(out, static_cast<double>(ms) / 1000.0, 3, 0);
}

// java.util.Date.toString() ("EEE MMM dd HH:mm:ss zzz yyyy") in UTC.
std::string JavaDate(int64_t epoch_ms) {
  std::time_t seconds = static_cast<std::time_t>(epoch_ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buf[64];
  size_t n = std::strftime(buf, sizeof(buf), "%a %b %d %H:%M:%S UTC %Y", &tm);
  return std::string(buf, n);
}

}  // namespace

std::string FormatHdrIntervalLog(const Timeline& timeline) {
  std::string out = "#[Logged with hammer " HAMMER_VERSION "]\n";
  out += "#[Histogram log format version 1.3]\n";
  if (!timeline.empty()) {
    int64_t base_ms = timeline.bucket_start_ms(0);
    out += "#[StartTime: ";
    AppendSeconds3(out, base_ms);
    out += " (seconds since epoch), " + JavaDate(base_ms) + "]\n";
    out += "#[BaseTime: ";
    AppendSeconds3(out, base_ms);
    out += " (seconds since epoch)]\n";
  }
  out +=
      "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n";
  for (size_t i = 0; i < timeline.size(); ++i) {
    const Histogram& latency = timeline.bucket(i).latency;
    AppendSeconds3(out, timeline.bucket_start_ms(i) - timeline.bucket_start_ms(0));
    out += ',';
    AppendSeconds3(out, timeline.bucket_ms());
    out += ',';
    AppendJavaFixed(out, static_cast<double>(latency.max()) / 1000.0, 3, 0);
    out += ',';
    out += latency.EncodeBase64(Histogram::kLogWriterZlibLevel);
    out += '\n';
  }
  return out;
}

}  // namespace hammer::stats
