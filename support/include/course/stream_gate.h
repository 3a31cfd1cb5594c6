// Telling whether code kept its work on the stream it was given.
//
// A StreamGate holds a stream shut: a one-thread kernel on it spins until open() is called, so
// nothing enqueued behind it can start. Whatever the code under test put anywhere else (the
// legacy default stream, the per-thread default stream, a stream of its own, a synchronous
// copy, the host) runs meanwhile; drain_other_streams() waits for the default streams, and a
// buffer that changed before the gate opened was written by work outside the stream. The gate
// gives up after its timeout, so code that waits for the whole device (cudaDeviceSynchronize,
// a synchronous cudaStreamSynchronize of the held stream) is reported, not hung on.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <vector>

namespace course {

class StreamGate {
 public:
  explicit StreamGate(cudaStream_t stream, double timeout_s = 2.0);
  ~StreamGate();  // opens the gate if it is still shut
  StreamGate(const StreamGate&) = delete;
  StreamGate& operator=(const StreamGate&) = delete;

  // Lets the held stream run; returns at once (the gate kernel ends soon after).
  void open();
  // True when the gate kernel stopped waiting on its own, before open(): something blocked
  // on the held stream for the whole timeout. Waits for the gate kernel to end.
  bool gave_up();

 private:
  cudaStream_t stream_;
  int* host_flags_ = nullptr;    // [0]: open, set by the host; [1]: gave up, set by the kernel
  int* device_flags_ = nullptr;  // the same pinned memory, as the device sees it
  cudaEvent_t done_ = nullptr;   // recorded right behind the gate kernel
  bool opened_ = false;
};

// Waits until everything enqueued so far on the legacy default stream, and on every stream that
// synchronises with it (blocking streams, the per-thread default stream), has finished; false
// when that takes longer than timeout_s.
bool drain_other_streams(double timeout_s = 2.0);

// What a call made behind a held stream showed.
struct HeldCall {
  bool changed = false;  // `changed` said yes before the gate opened: work ran elsewhere
  bool gave_up = false;  // the gate gave up before the call returned: it waited for the device
};

// How long call_held watches the outputs by default: long enough for any test's work.
constexpr double kHeldWindowMs = 20.0;

// Runs launch(stream) with `stream` held shut by a StreamGate, waits for the default
// streams, and asks `changed` (did the outputs move?) every 2 ms until it says yes or
// `window_ms` have passed, since work on a non-blocking stream of the launcher's own is not
// covered by drain_other_streams() and needs time to show; then opens the gate and waits for
// the gate kernel. The one mechanism behind course::testing::keeps_to_stream and the
// benchmark's held call, which sizes the window to the work's own time.
HeldCall call_held(cudaStream_t stream, const std::function<void(cudaStream_t)>& launch,
                   const std::function<bool()>& changed, double window_ms = kHeldWindowMs);

// A piece of memory the device can address (device, pinned or managed) that snapshot() copies.
struct Piece {
  const void* data;
  std::size_t bytes;
};

// Copies every piece, one after another, into `host` (room for their bytes added up), on a
// private non-blocking stream made for the call, with one wait: the copies wait for no other
// stream. A stream kept across a held call could share a hardware queue with one the
// launcher holds shut (docs/measurements/grading_speed.md), a fresh one has not.
void snapshot(const std::vector<Piece>& pieces, unsigned char* host);

// A host copy of `bytes` bytes there, as snapshot() above copies it.
std::vector<unsigned char> snapshot(const void* device, std::size_t bytes);

// Whether every one of `bytes` bytes there is `value`, read on the device (no copy to the
// host: cheap enough to ask every few milliseconds of a large buffer), on a private
// non-blocking stream like snapshot().
bool holds_only(const void* device, std::size_t bytes, unsigned char value);

}  // namespace course
