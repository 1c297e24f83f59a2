#pragma once
// The SIMT runtime: CUDA's execution model on the CPU.
//
// Threads of a block are fibers (Boost.Context) on one OS thread; blocks run on a pool of OS
// threads. Fibers switch only at barriers, warp collectives and exit, in an order chosen by
// simt::set_schedule. Beyond running the kernel, the runtime checks what a GPU cannot check for
// a beginner: barrier divergence, warp masks naming exited or absent lanes, races between the
// threads of a block, and out-of-bounds accesses. docs/simt.md explains the model and costs.
//
// portable.cuh includes this under g++; kernels use CUDA's names, host code the simt:: API.
#include "simt/core.hpp"          // qualifiers, dim3, index built-ins, settings, reports
#include "simt/pointer.hpp"       // simt::ptr / simt::ref, device memory, dynamic shared
#include "simt/builtins.hpp"      // barriers, warp collectives, atomics, fences, bit tricks
#include "simt/launch.hpp"        // simt::launch, simt::tail_launch
#include "simt/cooperative_groups.hpp"
