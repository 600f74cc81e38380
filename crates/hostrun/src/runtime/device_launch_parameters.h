// scopecheck: the runtime header stands for device_launch_parameters.h
#include "cuda_runtime.h"
