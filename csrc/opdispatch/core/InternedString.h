// InternedString: an immutable string stored once per distinct text.
#pragma once

#include <memory>
#include <ostream>
#include <string>

namespace opdispatch {

// Note [Interned debug strings]
// Each definition and each kernel records where it was registered
// ("registered at file:line"), and a loop or a module registering many
// operators does so from a handful of lines: stored as std::string, the same
// ~60-character text took a heap block per operator and registration. Stored
// as an InternedString, every record of one text shares one copy, kept while
// some record refers to it (a process that registers and removes operators
// for ever stays flat).

/// An immutable string shared by every InternedString of equal text.
/// Interning hashes the text and takes a process-wide lock: made once per
/// registration, never on a call path.
class InternedString final {
 public:
  /// The empty string (no allocation).
  InternedString() = default;
  /// The shared copy of `text` (implicit: registration APIs pass std::string).
  InternedString(const std::string& text);  // NOLINT(google-explicit-constructor)
  /// The shared copy of `text` (implicit: registration APIs pass literals).
  InternedString(const char* text) : InternedString(std::string(text)) {}  // NOLINT(google-explicit-constructor)

  bool empty() const { return text_ == nullptr; }

  const std::string& str() const { return text_ ? *text_ : emptyText(); }
  operator const std::string&() const { return str(); }  // NOLINT(google-explicit-constructor)

 private:
  static const std::string& emptyText();
  std::shared_ptr<const std::string> text_;
};

inline std::ostream& operator<<(std::ostream& os, const InternedString& s) { return os << s.str(); }

} // namespace opdispatch
