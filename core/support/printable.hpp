#pragma once
// Text from files and names made safe to print on a terminal: control characters (ESC, NUL,
// newlines inside a name, C1 controls) and bytes that are not UTF-8 are written as escapes, so a
// project named "\u001b[2J..." cannot clear the screen or forge a line of output.
// Thread-safety: plain functions.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cas {

// The layout characters that stay as they are: none in a name or a one-line message; tabs in a
// source line (so a caret lines up under it); tabs and newlines in multi-line text (an IR listing).
enum class Keep { Nothing, Tabs, TabsAndNewlines };

// Length of the valid UTF-8 character at `pos` (1 byte for ASCII, up to 4; no overlong form,
// surrogate or code point past U+10FFFF), or 0 when the bytes there are not one.
size_t validUtf8Length(std::string_view text, size_t pos);

// Each other control character becomes \n, \r, \t or \xNN (C1 controls, encoded in UTF-8 as
// C2 80..C2 9F, too), each byte that is not part of valid UTF-8 \xNN, a format character (below)
// \uNNNN; a backslash stays itself.
// Printable text, including non-ASCII UTF-8, is unchanged.
std::string printable(std::string_view text, Keep keep = Keep::Nothing);

// The code point of the invisible formatting or text direction character (Unicode's format
// characters: U+202E RIGHT-TO-LEFT OVERRIDE and the other embeddings, overrides and isolates,
// zero-width spaces and joiners, U+FEFF, the soft hyphen, ...) encoded at `pos`, or 0. Printed
// raw, U+202E shows the rest of a line reversed ("evil\u202etxt.exe" looks like "evilexe.txt"):
// printable() writes these as \u202e, and a name may not hold them.
char32_t formatCharacterAt(std::string_view text, size_t pos);

// The number of bytes of `text` starting at `pos` that printable() turns into one unit (a UTF-8
// sequence, or one byte), and how many columns that unit takes once printed (escapes are wider).
// The cells a terminal gives the printable character `c`: 2 for East Asian wide and fullwidth
// characters, 0 for combining marks, else 1.
size_t terminalColumns(char32_t c);

struct PrintedUnit {
  size_t bytes;
  size_t columns;
  bool escaped;  // printed as an escape sequence
};
PrintedUnit printedUnit(std::string_view text, size_t pos, Keep keep = Keep::Nothing);

// A value as an error quotes it: printable, in single quotes, and cut after `max` bytes (at a
// character's boundary) with its length: 'xxxx... (100000 bytes)'. A value quoted whole could
// make a message of megabytes.
std::string quoteValue(std::string_view text, size_t max = 64);

// A message that names a value it cannot vouch for (a path from an environment variable, in
// dlopen's words too) made safe to print: every occurrence of `value` quoted and cut as
// quoteValue does, the rest printable().
std::string printableQuoting(std::string_view message, std::string_view value);

// A shape as a message shows it, "[2, 3, 3]", cut after `maxDims` dimensions with its rank:
// "[1, 1, 1, 1, 1, 1, 1, 1, ... (100000 dims)]". A shape of a hundred thousand dimensions quoted
// whole would make a message of hundreds of kilobytes.
std::string quoteShape(const std::vector<std::int64_t>& shape, size_t maxDims = 8);

}  // namespace cas
