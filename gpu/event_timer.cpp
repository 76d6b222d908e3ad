#include "gpu/event_timer.hpp"

#include "gpu/cuda_check.hpp"

namespace cas::gpu {

EventTimer::~EventTimer() {
  for (CUevent e : pending_) cuEventDestroy(e);
  for (CUevent e : spare_) cuEventDestroy(e);
}

CUevent EventTimer::take() const {
  if (spare_.empty()) {
    CUevent e;
    CAS_CU(cuEventCreate(&e, CU_EVENT_DEFAULT));
    return e;
  }
  CUevent e = spare_.back();
  spare_.pop_back();
  return e;
}

void EventTimer::begin(CUstream s) {
  pending_.push_back(take());
  CAS_CU(cuEventRecord(pending_.back(), s));
}

void EventTimer::end(CUstream s) {
  pending_.push_back(take());
  CAS_CU(cuEventRecord(pending_.back(), s));
}

double EventTimer::seconds() const {
  if (pending_.empty()) return seconds_;
  CAS_CU(cuEventSynchronize(pending_.back()));
  for (size_t i = 0; i + 1 < pending_.size(); i += 2) {
    float ms = 0;
    CAS_CU(cuEventElapsedTime(&ms, pending_[i], pending_[i + 1]));
    seconds_ += double(ms) / 1000.0;
  }
  spare_.insert(spare_.end(), pending_.begin(), pending_.end());
  pending_.clear();
  return seconds_;
}

}  // namespace cas::gpu
