#pragma once
// A public header that reaches into the project's private tree: public_headers.cmake must refuse it.
#include "reducelab/config.hpp"
#include "core/dtype.hpp"
