#include "cluster_histogram_reference.h"

#include <cstddef>
#include <utility>

#include "course/parallel.h"

std::vector<unsigned> reference_histogram(const std::vector<unsigned>& values, int num_bins) {
  // A range per core only pays when it holds far more values than the table has bins.
  constexpr std::size_t kPerThread = std::size_t{1} << 20;
  std::vector<std::vector<unsigned>> parts(course::chunk_count(values.size(), kPerThread));
  course::parallel_chunks(values.size(), kPerThread, [&](std::size_t chunk, std::size_t begin,
                                                         std::size_t end) {
    std::vector<unsigned> counts(static_cast<std::size_t>(num_bins), 0u);
    for (std::size_t i = begin; i < end; ++i) ++counts[values[i]];
    parts[chunk] = std::move(counts);
  });
  std::vector<unsigned> counts(static_cast<std::size_t>(num_bins), 0u);
  for (const std::vector<unsigned>& part : parts)
    for (std::size_t b = 0; b < part.size(); ++b) counts[b] += part[b];
  return counts;
}
