// Owning wrappers for CUDA streams and events (host only). Streams are non-blocking: ranks that
// share a GPU must never serialize on the legacy default stream.
#pragma once

#include <cuda_runtime_api.h>

namespace symmoe {

class Stream {
 public:
  Stream();
  ~Stream();  // waits for the stream's work, then destroys it
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }
  operator cudaStream_t() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

class Event {
 public:
  Event();
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return event_; }
  operator cudaEvent_t() const { return event_; }

  void record(cudaStream_t stream);
  // In a stream being captured, a plain record only orders streams; this one becomes an
  // event-record node of the graph, so replays can be timed.
  void record_in_graph(cudaStream_t stream);
  // Milliseconds from `from` to this event (both recorded and complete).
  float since(const Event& from) const;

 private:
  cudaEvent_t event_ = nullptr;
};

}  // namespace symmoe
