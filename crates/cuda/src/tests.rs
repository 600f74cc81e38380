//! Unit tests of the lowering: the IR of small kernels, and errors.
