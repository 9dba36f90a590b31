#pragma once
// The registry of run-time knobs (STYLE.md practice 11).
//
// A knob has a name, a type, a default and a help line. Its value comes from the default,
// or from the environment variable PARAXIS_<NAME> (upper case). Values are validated when
// the Knobs object is built, so a malformed value fails at start-up with the variable named,
// and an unknown PARAXIS_* variable fails too (a typo must not be silently ignored).
// Knobs is an ordinary value passed to whoever needs it; there is no global instance.
#include <map>
#include <string>
#include <vector>

namespace paraxis {

enum class KnobType { kBool, kInt, kDouble, kString, kBytes, kSeconds };

struct KnobSpec {
  std::string name;  // lower_snake_case
  KnobType type;
  std::string defaultValue;
  std::string help;
  // Numeric knobs: the accepted range, in base units (seconds, bytes); a value outside it, or
  // not finite, fails at start-up with the range named.
  double minimum = -1e300;
  double maximum = 1e300;
  // String knobs: the accepted values (empty: any); another fails at start-up with them named.
  std::vector<std::string> choices = {};
};

class Knobs {
 public:
  struct Entry {
    KnobSpec spec;
    std::string value;   // as given (default or environment), already validated
    std::string source;  // "default" or the environment variable's name
  };

  // `environment` holds variable name -> value; usually processEnvironment().
  static Knobs load(const std::vector<KnobSpec>& specs,
                    const std::map<std::string, std::string>& environment);

  bool getBool(const std::string& name) const;
  long long getInt(const std::string& name) const;
  double getDouble(const std::string& name) const;  // also kBytes and kSeconds, in base units
  const std::string& getString(const std::string& name) const;

  const std::vector<Entry>& entries() const { return entries_; }

 private:
  const Entry& find(const std::string& name, KnobType expected) const;
  std::vector<Entry> entries_;
};

// "threads" -> "PARAXIS_THREADS".
std::string knobVariable(const std::string& name);
std::string knobTypeName(KnobType type);

// Every PARAXIS_* variable of this process.
std::map<std::string, std::string> processEnvironment();

}  // namespace paraxis
