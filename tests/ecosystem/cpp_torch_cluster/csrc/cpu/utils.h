// After torch_cluster's csrc/cpu/utils.h: the argument checks its CPU
// kernels share, written with ATen's AT_ASSERTM (OPDISPATCH_ASSERTM).
#pragma once

#include "../extensions.h"

#define CHECK_CPU(x) OPDISPATCH_ASSERTM(x.device().is_cpu(), #x " must be CPU tensor")
#define CHECK_INPUT(x) OPDISPATCH_ASSERTM(x, "Input mismatch")
#define CHECK_CONTIGUOUS(x) OPDISPATCH_ASSERTM(x.is_contiguous(), #x " must be contiguous")
