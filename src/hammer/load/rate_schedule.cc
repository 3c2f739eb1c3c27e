#include "hammer/load/rate_schedule.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "hammer/base/duration.h"

namespace hammer::load {

namespace {

constexpr double kMaxRate = 1e8;  // as --rate

std::vector<std::string_view> SplitCommas(std::string_view text) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    parts.push_back(text.substr(start, comma - start));
    if (comma == std::string_view::npos) return parts;
    start = comma + 1;
  }
}

}  // namespace

Result<RateSchedule> RateSchedule::Parse(std::string_view text, double initial_rate) {
  RateSchedule schedule;
  schedule.initial_ = initial_rate;
  std::vector<std::string_view> parts = SplitCommas(text);
  double from = initial_rate;
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string part(parts[i]);
    auto bad = [&](const std::string& why) {
      return Status::Error("stage " + std::to_string(i + 1) + " '" + part + "': " + why +
                           " (expected DURATION:RATE, e.g. 30s:100,1m:500,30s:0)");
    };
    const size_t colon = part.find(':');
    if (colon == std::string::npos) return bad("no ':'");
    Result<Nanos> duration = ParseDuration(part.substr(0, colon));
    if (!duration.ok() || *duration <= 0) return bad("the duration must be positive");
    const std::string rate_text = part.substr(colon + 1);
    char* end = nullptr;
    const double target = std::strtod(rate_text.c_str(), &end);
    if (rate_text.empty() || *end != '\0' || !(target >= 0) || target > kMaxRate) {
      return bad("the rate must be a number of requests per second from 0 to 1e8");
    }
    Segment segment;
    segment.start = schedule.total_;
    segment.duration = *duration;
    segment.from = from;
    segment.to = target;
    segment.requests_before = schedule.total_requests_;
    schedule.total_requests_ += Integral(segment, static_cast<long double>(*duration) / kSecond);
    schedule.total_ += *duration;
    schedule.segments_.push_back(segment);
    schedule.stages_.push_back({*duration, target});
    from = target;
  }
  if (schedule.peak_rate() <= 0) return Status::Error("every stage's rate is 0: nothing to send");
  return schedule;
}

long double RateSchedule::Integral(const Segment& s, long double seconds) {
  const long double d = static_cast<long double>(s.duration) / kSecond;
  return s.from * seconds + (s.to - s.from) * seconds * seconds / (2 * d);
}

double RateSchedule::peak_rate() const {
  double peak = initial_;
  for (const Stage& stage : stages_)
    peak = std::max(peak, stage.target);
  return peak;
}

double RateSchedule::RateAt(Nanos elapsed) const {
  for (const Segment& s : segments_) {
    if (elapsed < s.start + s.duration) {
      const double f = static_cast<double>(std::max<Nanos>(0, elapsed - s.start)) /
                       static_cast<double>(s.duration);
      return s.from + (s.to - s.from) * f;
    }
  }
  return segments_.empty() ? initial_ : segments_.back().to;
}

long double RateSchedule::RequestsBy(Nanos elapsed) const {
  if (elapsed <= 0) return 0;
  for (const Segment& s : segments_) {
    if (elapsed < s.start + s.duration) {
      return s.requests_before + Integral(s, static_cast<long double>(elapsed - s.start) / kSecond);
    }
  }
  const double last = segments_.empty() ? initial_ : segments_.back().to;
  return total_requests_ + last * static_cast<long double>(elapsed - total_) / kSecond;
}

Nanos RateSchedule::DueTime(uint64_t n) const {
  const long double target = static_cast<long double>(n);
  for (const Segment& s : segments_) {
    const long double d = static_cast<long double>(s.duration) / kSecond;
    const long double in_segment = Integral(s, d);
    if (target > s.requests_before + in_segment) continue;
    // Solve from*t + (to-from)/(2d)*t^2 = m for t in [0, d]; the form 2m / (from + sqrt(...))
    // has no cancellation and holds for ramps up and down (and a flat stage).
    const long double m = target - s.requests_before;
    if (m <= 0) return s.start;
    const long double a = (static_cast<long double>(s.to) - s.from) / (2 * d);
    const long double root =
        std::sqrt(std::max<long double>(0, static_cast<long double>(s.from) * s.from + 4 * a * m));
    const long double denominator = s.from + root;
    if (denominator <= 0) continue;  // a rate of 0 throughout: nothing due here
    const long double t = std::min(d, 2 * m / denominator);
    return s.start + static_cast<Nanos>(std::llround(t * kSecond));
  }
  const double last = segments_.empty() ? initial_ : segments_.back().to;
  if (last <= 0) return -1;
  const long double beyond = (target - total_requests_) / last;
  return total_ + static_cast<Nanos>(std::llround(beyond * kSecond));
}

uint64_t RateSchedule::DueCount(Nanos elapsed) const {
  if (elapsed < 0) return 0;
  // The integral gives the count to within rounding; DueTime decides at the edges, so that
  // DueCount and DueTime always agree.
  const long double by = RequestsBy(elapsed);
  uint64_t count = static_cast<uint64_t>(std::floor(by)) + 1;
  auto due = [&](uint64_t n) {
    Nanos t = DueTime(n);
    return t >= 0 && t <= elapsed;
  };
  while (count > 0 && !due(count - 1))
    --count;
  while (due(count))
    ++count;
  return count;
}

}  // namespace hammer::load
