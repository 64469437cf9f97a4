#pragma once
// PB_HOST_DEVICE marks a function both host and device code call (the
// families' key orders, distance helpers); plain C++ where nvcc is not compiling.
#ifdef __CUDACC__
#define PB_HOST_DEVICE __host__ __device__
#else
#define PB_HOST_DEVICE
#endif

// PB_UNROLL asks nvcc to unroll the loop that follows in device code (a loop
// over a thread's registers must, so they stay registers); host compilers,
// which warn about the pragma, get nothing.
#ifdef __CUDA_ARCH__
#define PB_UNROLL _Pragma("unroll")
#else
#define PB_UNROLL
#endif
