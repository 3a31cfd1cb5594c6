#include "course/parallel.h"

#include <algorithm>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace course {

std::size_t chunk_count(std::size_t n, std::size_t min_per_thread, unsigned max_threads) {
  const unsigned cores = max_threads != 0 ? max_threads
                                          : std::clamp(std::thread::hardware_concurrency(), 1u, 16u);
  const std::size_t by_size = n / std::max<std::size_t>(min_per_thread, 1);
  return std::clamp<std::size_t>(by_size, 1, cores);
}

std::size_t parallel_chunks(std::size_t n, std::size_t min_per_thread,
                            const std::function<void(std::size_t, std::size_t, std::size_t)>& body,
                            unsigned max_threads) {
  const std::size_t chunks = chunk_count(n, min_per_thread, max_threads);
  if (chunks == 1) {
    body(0, 0, n);
    return 1;
  }
  std::exception_ptr failure;
  std::mutex failure_lock;
  auto run = [&](std::size_t c) {
    try {
      body(c, c * n / chunks, (c + 1) * n / chunks);
    } catch (...) {
      const std::lock_guard<std::mutex> hold(failure_lock);
      if (!failure) failure = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  std::vector<std::size_t> inline_chunks{0};  // the calling thread takes chunk 0 itself
  threads.reserve(chunks - 1);
  for (std::size_t c = 1; c < chunks; ++c) {
    try {
      threads.emplace_back(run, c);
    } catch (const std::system_error&) {  // no more threads here (a process limit)
      inline_chunks.push_back(c);
    }
  }
  for (const std::size_t c : inline_chunks) run(c);
  for (std::thread& thread : threads) thread.join();
  if (failure) std::rethrow_exception(failure);
  return chunks;
}

}  // namespace course
