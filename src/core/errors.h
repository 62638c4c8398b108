// Errors by whose fault: InputError is bad input from the user (a config, a data file, a
// command-line argument), and main() maps it to exit status 2 in one place; TryAgainError is a
// service that did not answer for now (Slurm's controller), exit status 75 (EX_TEMPFAIL, as
// "still pending"); any other exception escaping a command is exit status 1.
#pragma once
#include <stdexcept>
#include <string>

namespace nt {

class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A command-line argument that cannot be used ("--delta: must be > 0, got -1").
class UsageError : public InputError {
 public:
  using InputError::InputError;
};

class TryAgainError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace nt
