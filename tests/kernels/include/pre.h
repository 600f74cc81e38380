// Read before the checked file's first line with `-include`: a macro it relies on.
#define STRIDE_OF_GRID (blockDim.x * gridDim.x)
