#include "hammer/dark/noise_filter.h"

namespace hammer::dark {

NoiseVerdict JudgeField(uint64_t raw, uint64_t noise, uint64_t total,
                        const NoiseThresholds& thresholds) {
  NoiseVerdict verdict;
  auto gap = static_cast<double>(raw > noise ? raw - noise : noise - raw);
  if (raw + noise > 0) verdict.relative_percent = 100 * gap / static_cast<double>(raw + noise);
  if (total > 0) verdict.absolute_percent = 100 * gap / static_cast<double>(total);
  verdict.reported = raw > noise && verdict.relative_percent > thresholds.relative_percent &&
                     verdict.absolute_percent > thresholds.absolute_percent;
  return verdict;
}

}  // namespace hammer::dark
