// Host work split over the machine's cores: inputs of hundreds of millions of elements drawn,
// and outputs of that size compared, in the time a benchmark or test can spare.
#pragma once

#include <cstddef>
#include <functional>

namespace course {

// Calls body(begin, end) on consecutive ranges that cover [0, n) exactly once, on up to
// `max_threads` threads (0: the machine's cores, at most 16), each range at least
// `min_per_thread` long; chunk c of the returned count covers [c * n / count, (c + 1) * n /
// count). Small n runs on the calling thread. Returns the number of chunks. A thread that
// cannot be started leaves its range to the calling thread; an exception in body is rethrown
// once every range has ended.
std::size_t parallel_chunks(std::size_t n, std::size_t min_per_thread,
                            const std::function<void(std::size_t chunk, std::size_t begin,
                                                     std::size_t end)>& body,
                            unsigned max_threads = 0);

// The number of chunks parallel_chunks would use for n, min_per_thread and max_threads.
std::size_t chunk_count(std::size_t n, std::size_t min_per_thread, unsigned max_threads = 0);

}  // namespace course
