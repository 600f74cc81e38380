// scopecheck: cooperative groups on the host side. Kernel bodies are not compiled here; what
// host code names of cooperative groups is the namespace (and cudaLaunchCooperativeKernel,
// which the runtime does not model yet).
#ifndef SCOPECHECK_COOPERATIVE_GROUPS_H
#define SCOPECHECK_COOPERATIVE_GROUPS_H
#include "cuda_runtime.h"
namespace cooperative_groups {}
#endif
