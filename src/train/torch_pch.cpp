// Anchor translation unit that owns the shared torch precompiled header.
#include "train/torch_pch.hpp"
