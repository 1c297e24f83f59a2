#pragma once
// Moved to the installed headers; kept so older includes still resolve.
#include "reducelab/detail/reduce_order.hpp"
