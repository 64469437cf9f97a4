#pragma once
// PB_HOST_DEVICE marks a function both host and device code call (the
// families' key orders, distance helpers); plain C++ where nvcc is not compiling.
#ifdef __CUDACC__
#define PB_HOST_DEVICE __host__ __device__
#else
#define PB_HOST_DEVICE
#endif
