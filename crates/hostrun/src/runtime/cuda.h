// scopecheck: the runtime header stands for cuda.h
#include "cuda_runtime.h"
