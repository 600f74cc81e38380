//! Explorer.
