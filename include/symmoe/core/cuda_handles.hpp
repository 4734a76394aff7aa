// Owning wrappers for CUDA streams and events (host only). Streams are non-blocking: ranks that
// share a GPU must never serialize on the legacy default stream.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>

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

// A CUDA graph captured from what a callable enqueues on a stream (thread-local capture mode),
// instantiated once and destroyed with the object. If the callable throws, the capture is
// ended and discarded before the error propagates, so the stream is usable again.
class CapturedGraph {
 public:
  CapturedGraph(cudaStream_t stream, const std::function<void()>& enqueue);
  ~CapturedGraph();
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;

  void launch(cudaStream_t stream);

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace symmoe
