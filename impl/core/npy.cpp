#include "core/npy.hpp"

#include <fstream>

namespace pb {

// Magic, version, header length (little-endian 16 bits), then a dict padded
// with spaces to a multiple of 64 bytes ending in '\n', then the data.
bool write_npy(const std::string& path, const double* data, const std::vector<std::int64_t>& shape) {
  std::string dims;
  std::int64_t count = 1;
  for (std::int64_t d : shape) dims += std::to_string(d) + ", ", count *= d;
  std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (" + dims + "), }";
  const std::size_t fixed = 10;  // magic (6) + version (2) + length (2)
  const std::size_t total = fixed + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  std::ofstream f(path, std::ios::binary);
  const unsigned char head[8] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  const std::uint16_t len = std::uint16_t(dict.size());
  const unsigned char le[2] = {static_cast<unsigned char>(len & 0xff), static_cast<unsigned char>(len >> 8)};
  f.write(reinterpret_cast<const char*>(head), 8);
  f.write(reinterpret_cast<const char*>(le), 2);
  f << dict;
  f.write(reinterpret_cast<const char*>(data), std::streamsize(count * std::int64_t(sizeof(double))));
  return bool(f);
}

}  // namespace pb
