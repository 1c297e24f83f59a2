#pragma once
// Moved to the installed headers; kept so older includes still resolve.
#include "reducelab/detail/agent_reduce.cuh"
