#include "symmoe/core/cuda_handles.hpp"

#include "symmoe/core/error.hpp"

namespace symmoe {

Stream::Stream() { SYMMOE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }

Stream::~Stream() {
  if (stream_ != nullptr) {
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
  }
}

Event::Event() { SYMMOE_CUDA_CHECK(cudaEventCreate(&event_)); }

Event::~Event() {
  if (event_ != nullptr) cudaEventDestroy(event_);
}

void Event::record(cudaStream_t stream) { SYMMOE_CUDA_CHECK(cudaEventRecord(event_, stream)); }

void Event::record_in_graph(cudaStream_t stream) {
  SYMMOE_CUDA_CHECK(cudaEventRecordWithFlags(event_, stream, cudaEventRecordExternal));
}

float Event::since(const Event& from) const {
  float ms = 0;
  SYMMOE_CUDA_CHECK(cudaEventElapsedTime(&ms, from.event_, event_));
  return ms;
}

CapturedGraph::CapturedGraph(cudaStream_t stream, const std::function<void()>& enqueue) {
  SYMMOE_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  try {
    enqueue();
  } catch (...) {
    cudaGraph_t partial = nullptr;
    if (cudaStreamEndCapture(stream, &partial) == cudaSuccess && partial != nullptr) cudaGraphDestroy(partial);
    cudaGetLastError();
    throw;
  }
  SYMMOE_CUDA_CHECK(cudaStreamEndCapture(stream, &graph_));
  const cudaError_t rc = cudaGraphInstantiate(&exec_, graph_, 0);
  if (rc != cudaSuccess) {
    cudaGraphDestroy(graph_);
    SYMMOE_CUDA_CHECK(rc, "instantiating a captured graph");
  }
}

CapturedGraph::~CapturedGraph() {
  if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
  if (graph_ != nullptr) cudaGraphDestroy(graph_);
}

void CapturedGraph::launch(cudaStream_t stream) { SYMMOE_CUDA_CHECK(cudaGraphLaunch(exec_, stream)); }

}  // namespace symmoe
