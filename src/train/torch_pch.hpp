#pragma once
// The precompiled header every torch translation unit reuses (see cmake/paraxis.cmake).
#include <torch/torch.h>
