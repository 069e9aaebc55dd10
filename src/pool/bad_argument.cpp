// sta-pool: the messages of refused arguments (detail/diag/bad_argument.hpp), compiled
// once: a unit that checks an argument parses no <string> or <stdexcept> for them.
#define STA_POOL_BODIES 1 // the unit that gives them (detail/config.hpp)
#include "sta/detail/diag/bad_argument.hpp"
