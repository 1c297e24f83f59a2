#pragma once
// Moved to the installed headers; kept so older includes still resolve.
#include "reducelab/detail/block_reduce.cuh"
