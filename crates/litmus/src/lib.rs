//! Litmus parsers.
