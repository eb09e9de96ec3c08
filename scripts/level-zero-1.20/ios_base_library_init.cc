// std::ios_base_library_init() for Debian 13's Level Zero loader on Debian 12.
//
// GCC 13's <iostream> makes every object that includes it reference this function, whose
// definition in GCC 13's libstdc++ (GLIBCXX_3.4.32) guarantees that the standard streams are
// constructed before the object's own initialisers run. GCC 12's libstdc++ has no such function:
// there, each object that includes <iostream> constructs a static std::ios_base::Init instead.
// This library, a needed library of the patched loader (so its initialisers run first), does
// both: its own std::ios_base::Init constructs the streams, and the function exists.
#include <iostream>

namespace std {
void ios_base_library_init();
void ios_base_library_init() {}
}  // namespace std
