#pragma once
// NumPy .npy files (format version 1.0) of float64 arrays, for the tools that
// hand parbench's data to Python (sor-solve's field, kmeans-inputs' points).
#include <cstdint>
#include <string>
#include <vector>

namespace pb {

// Writes `data` (row-major, the product of `shape` values) to `path` as a
// little-endian '<f8' array of that shape. False when the file cannot be written.
bool write_npy(const std::string& path, const double* data, const std::vector<std::int64_t>& shape);

}  // namespace pb
