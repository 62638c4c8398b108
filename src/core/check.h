// NT_CHECK: a shape or invariant violated inside the library is a programming error; it
// throws std::logic_error naming the file, line and condition.
#pragma once
#include <stdexcept>
#include <string>

#define NT_STR2(x) #x
#define NT_STR(x) NT_STR2(x)
#define NT_CHECK(cond, what)                                                                    \
  do {                                                                                          \
    if (!(cond))                                                                                \
      throw std::logic_error(std::string(__FILE__ ":" NT_STR(__LINE__) ": ") + (what) + " (" #cond ")"); \
  } while (0)
