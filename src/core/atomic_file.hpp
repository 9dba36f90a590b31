#pragma once
// Writes a whole output or nothing. A regular file (or a new one): the bytes go to a
// temporary file beside `path`, every write and the close are checked, the data is flushed
// to disk, and only then is the temporary renamed over `path`; on any failure the temporary
// is removed. A path that exists and is not a regular file (a pipe, /dev/null, a terminal)
// is written in place, every write checked: renaming over it would replace the device.
// A failure throws OutputError naming `option` (the command-line option or output it
// serves), the path and the cause.
#include <string>
#include <string_view>

namespace paraxis {

void writeFileAtomically(const std::string& path, std::string_view bytes, const std::string& option);

// Flushes standard output and checks that everything printed reached it (a full disk, a
// closed descriptor); OutputError "standard output: ..." otherwise.
void finishStandardOutput();

}  // namespace paraxis
