// The element index comes from a function-like macro the build defines, as code tuned per
// target does (`-D'INDEX(b,t)=...'`); without one the file's default is used. Defaults and
// verdicts, in both views alike (the same macro reaches both preprocessors):
// - no -D: INDEX(b, t) is the grid-wide index b * blockDim.x + t: every thread of the default
//   launch (2 blocks of 2) writes its own element: no race;
// - `--define 'INDEX(b,t)=(t)'`: the block is forgotten, threads t of both blocks write a[t]:
//   a race between the blocks;
// - `-D'INDEX(b,t)=(t)' --undefine INDEX`: the -U removes the command line's macro, the
//   default is back: no race.
#ifndef INDEX
#define INDEX(b, t) ((b) * blockDim.x + (t))
#endif

__global__ void fill(int *a) {
    a[INDEX(blockIdx.x, threadIdx.x)] = 1;
}
