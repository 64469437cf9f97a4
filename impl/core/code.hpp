#pragma once
// The code an instance runs, as a fingerprint: the JSON's "code"
// (docs/json.md). Two builds of the same source give the same fingerprint; a
// change to the code an instance runs changes its fingerprint, and a change to
// another variant's code does not.
//
// An instance names the sources that hold its code (Code): a registry line
// names the file that defines its variant's factory (Entry::code); an
// instance built on another family's variant adds that variant's file (an MLP
// step on a GEMM backend). At build time cmake/code_fingerprints.py hashes the
// code of every object of the harness's libraries (machine code, data and
// relocations; a .cu file's device code too; not debug information, paths or
// timestamps) and records which objects call functions of which. An
// instance's fingerprint hashes the objects its sources reach through those
// calls, each with its source and its hash: a helper in another file that the
// variant calls (the k-means device kernels' common code, the GEMM tile
// tables) is part of it; a registry is not followed, since it reaches every
// variant of its family and the one an instance runs through it is the entry
// the instance names.
//
// Granularity is the source file: variants defined in one file (the CUB and
// Thrust sorts, the SOR kernels of natural.cu) share a fingerprint, and any
// change to that file's code changes it for all of them.
#include <cstddef>
#include <string>
#include <vector>

namespace pb {

struct Code {
  // Paths from the repository root, e.g. "impl/gemm/cpu/blocked.cpp".
  std::vector<std::string> sources;

  Code() = default;
  // Implicit: a registry line names its variant's file as a string.
  Code(const char* source) : sources{source} {}
  Code plus(const Code& more) const;
  bool empty() const { return sources.empty(); }
};

// One object of the build, as the generated table lists it.
struct CodeObject {
  const char* source;  // path from the repository root
  const char* hash;    // 16 hex digits: the object's code
  const char* calls;   // the objects it calls functions of: indices into the table, space-separated
};

// The generated table (build/<preset>/generated/code_table.cpp) installs itself
// with a static CodeTable. Its object is linked into bench and the test binary
// directly, never into a library whose objects it hashes; a program without it
// has an empty table and no fingerprints.
class CodeTable {
 public:
  CodeTable(const CodeObject* objects, std::size_t count);
};

// The build's objects, in the table's order (sorted by source).
const std::vector<CodeObject>& code_objects();

// The indices of the objects that `code`'s sources reach through their calls
// (sorted; a registry's object is not followed), or empty when a source is
// not in the table.
std::vector<int> code_closure(const Code& code);

// 16 hex digits: FNV-1a (64 bit) of the reached objects' sources and hashes;
// empty when a source is not in the table (or no table is linked).
std::string code_fingerprint(const Code& code);

}  // namespace pb
