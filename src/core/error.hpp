#pragma once
// The two tiers of errors (STYLE.md practice 5).
//
// User and environment errors derive from paraxis::Error: their message is one line that
// names the component (file, key, layer, rank) together with what was expected and what
// was found. The CLI prints it as is and exits with code 2 (1 for an OutputError).
// Broken invariants go through check() in check.hpp and raise InternalError, which the CLI
// reports as a bug (exit code 3).
#include <stdexcept>
#include <string>

namespace paraxis {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A file, key or value given by the user is malformed or out of range.
class ConfigError : public Error {
 public:
  using Error::Error;
};

// A count (elements, parameters, bytes) beyond what paraxis represents exactly (core/counts.hpp).
class OverflowError : public ConfigError {
 public:
  using ConfigError::ConfigError;
};

// A name (model, cluster, knob, layer) that does not exist; the message lists what does.
class NotFoundError : public Error {
 public:
  using Error::Error;
};

// Two tensor shapes that do not fit together; the message names the layer and both shapes.
class ShapeError : public Error {
 public:
  using Error::Error;
};

// A request the strategy or machine cannot satisfy (too many ranks, memory, divisibility).
class InfeasibleError : public Error {
 public:
  using Error::Error;
};

// An output (a file the user named, a checkpoint, standard output) could not be written
// whole; nothing partial is left behind. The CLI exits with code 1.
class OutputError : public Error {
 public:
  using Error::Error;
};

// A peer failed, disagreed or did not answer in time (names the operation and the ranks).
class CommError : public Error {
 public:
  using Error::Error;
};

class TimeoutError : public CommError {
 public:
  using CommError::CommError;
};

// A broken invariant inside paraxis: a bug, not a user error.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

}  // namespace paraxis
