#pragma once
// Shared part of the CUDA GEMM variants: operands uploaded once in prepare(),
// output poisoned with 0xFF bytes (a NaN in float and double) so an unwritten
// element fails verification, and the variant's own non-blocking stream.
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "core/cuda/buffer.cuh"
#include "core/cuda/device_sm.cuh"
#include "gemm/gemm.hpp"

namespace pb::gemm {

template <class T>
class DeviceVariant : public Variant<T> {
 public:
  void prepare(const Problem& p, const Inputs<T>& in) override {
    p_ = p;
    stream_ = std::make_unique<Stream>();
    a_ = DeviceBuffer<T>(in.a.size());
    b_ = DeviceBuffer<T>(in.b.size());
    c_ = DeviceBuffer<T>(in.c.size());
    d_ = DeviceBuffer<T>(p.c_elems());
    PB_CUDA(cudaMemcpyAsync(a_.get(), in.a.data(), a_.bytes(), cudaMemcpyHostToDevice, s()));
    PB_CUDA(cudaMemcpyAsync(b_.get(), in.b.data(), b_.bytes(), cudaMemcpyHostToDevice, s()));
    if (c_.size()) PB_CUDA(cudaMemcpyAsync(c_.get(), in.c.data(), c_.bytes(), cudaMemcpyHostToDevice, s()));
    PB_CUDA(cudaMemsetAsync(d_.get(), 0xFF, d_.bytes(), s()));
    PB_CUDA(cudaStreamSynchronize(s()));
  }
  void result(std::vector<T>& out) override {
    out.resize(d_.size());
    PB_CUDA(cudaMemcpyAsync(out.data(), d_.get(), d_.bytes(), cudaMemcpyDeviceToHost, s()));
    PB_CUDA(cudaStreamSynchronize(s()));
  }
  void* stream() override { return stream_ ? stream_->get() : nullptr; }
  void run() override { launch(p_, a_.get(), b_.get(), c_.get(), d_.get()); }

  // As a backend (the MLP training step): the operands are device pointers
  // the caller owns; compute() enqueues the product on stream() and returns
  // without waiting. bind() creates that stream.
  bool computes_for_caller() const override { return true; }
  void bind() override {
    if (!stream_) stream_ = std::make_unique<Stream>();
    bind_device();
  }
  void compute(const Problem& p, const T* a, const T* b, const T* c, T* out) override {
    launch(p, a, b, c, out);
  }

 protected:
  // Enqueues the product of p on s() and checks the launch: what run()
  // times on the variant's own operands and compute() runs on the caller's.
  virtual void launch(const Problem& p, const T* a, const T* b, const T* c, T* d) = 0;
  virtual void bind_device() {}  // what prepare() sets up beside the operands (cuBLAS: its handle)
  cudaStream_t s() const { return stream_->get(); }
  Problem p_;
  std::unique_ptr<Stream> stream_;
  DeviceBuffer<T> a_, b_, c_, d_;  // d_ is the output (C of AB / AtB, D of ABtC)
};

// Whether q may be read or written 16 bytes at a time.
inline bool aligned16(const void* q) { return reinterpret_cast<std::uintptr_t>(q) % 16 == 0; }

// The names of a tunable kernel's tile configurations (anything with .name),
// in order: what --gemm-tile and the tuned table call them (gemm/gemm.hpp).
template <class Tiles>
std::vector<std::string> tile_names(const Tiles& tiles) {
  std::vector<std::string> out;
  for (const auto& t : tiles) out.push_back(t.name);
  return out;
}

// Calls f(std::integral_constant<Op, op>{}) for the run-time op, so a kernel
// templated on the operation is launched from one line.
template <class F>
void with_op(Op op, F&& f) {
  switch (op) {
    case Op::AB: f(std::integral_constant<Op, Op::AB>{}); break;
    case Op::AtB: f(std::integral_constant<Op, Op::AtB>{}); break;
    case Op::ABtC: f(std::integral_constant<Op, Op::ABtC>{}); break;
  }
}

}  // namespace pb::gemm
