#pragma once
// Device time of queued work, measured with CUDA events: begin() and end() bracket work queued on
// a stream; seconds() waits for the last bracket and adds up every bracket's elapsed time since
// the timer was made. Events are reused once read, so a timer bracketing every training step
// holds only the brackets not yet read.
// Thread-safety: one thread at a time, with the timer's context current.
#include <cuda.h>

#include <vector>

namespace cas::gpu {

class EventTimer {
 public:
  EventTimer() = default;
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  void begin(CUstream s);
  void end(CUstream s);  // after a begin() on the same stream
  double seconds() const;

 private:
  CUevent take() const;
  mutable std::vector<CUevent> pending_, spare_;  // pending_: begin, end, begin, end, ...
  mutable double seconds_ = 0;
};

}  // namespace cas::gpu
