// The copy ceilings ("copy:<bytes>"), for every exercise whose benchmark compares with a copy
// of its size: the course_ceilings program measures each key it is given once.
#include <string>

#include "course/bench.h"

void course::run_ceilings(course::Benchmark& bench) {
  const std::string prefix = "copy:";
  for (const std::string& key : bench.options().only_keys) {
    const std::string digits = key.substr(0, prefix.size()) == prefix ? key.substr(prefix.size()) : "";
    // Any other key is left unmeasured, and finish() names it.
    if (digits.empty() || digits.size() > 18 ||
        digits.find_first_not_of("0123456789") != std::string::npos)
      continue;
    bench.copy_ceiling(std::stoull(digits));
  }
}
