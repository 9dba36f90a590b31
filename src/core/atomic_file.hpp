#pragma once
// Writes a whole output file or nothing: the text goes to a temporary file beside `path`,
// every write and the close are checked, the data is flushed to disk, and only then is the
// temporary renamed over `path`. On any failure the temporary is removed and ConfigError
// names `option` (the command-line option or output it serves), the path and the cause.
#include <string>
#include <string_view>

namespace paraxis {

void writeFileAtomically(const std::string& path, std::string_view text, const std::string& option);

}  // namespace paraxis
