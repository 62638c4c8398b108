// Where the tests find the project's checkout, the normtool program under test and the golden files.
//
// CMake knows these paths; only tests/paths.cpp is compiled with them. Were they string literals
// in every test, GCC 12 would fold their length into `std::string(path) + "/" + name` and, at some
// lengths of the checkout's path (the build machine's, not ours), report the copy as out of bounds
// (-Warray-bounds, a false positive of its inlined std::string). A string it cannot see into has no
// length to fold.
#pragma once
#include <string>

namespace nt::test {

const std::string& source_dir();  // the project's checkout: configs/, docs/, reports/
const std::string& binary();      // the normtool program built with the tests
const std::string& golden_dir();  // tests/golden: the PyTorch reference files
const std::string& output_dir();  // build/tests: what the tests keep to look at (pages, screenshots)

}  // namespace nt::test
