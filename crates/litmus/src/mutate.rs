//! Byte-level mutations of valid inputs, for the "never panics" property tests of both dialects.

use proptest::prelude::*;

#[derive(Debug, Clone)]
pub enum Mutation {
    Delete(usize),
    Insert(usize, u8),
    Replace(usize, u8),
    Truncate(usize),
}

/// Mutations whose inserted bytes are biased towards `interesting`, the characters a grammar
/// cares about.
pub fn mutation(interesting: &'static [u8]) -> impl Strategy<Value = Mutation> {
    let byte = prop_oneof![any::<u8>(), prop::sample::select(interesting.to_vec())];
    prop_oneof![
        any::<usize>().prop_map(Mutation::Delete),
        (any::<usize>(), byte.clone()).prop_map(|(i, b)| Mutation::Insert(i, b)),
        (any::<usize>(), byte).prop_map(|(i, b)| Mutation::Replace(i, b)),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

/// `src` with the mutations applied in order (positions wrap around the current length).
pub fn apply(src: &str, muts: &[Mutation]) -> String {
    let mut bytes = src.as_bytes().to_vec();
    for m in muts {
        let n = bytes.len();
        match *m {
            Mutation::Delete(i) if n > 0 => {
                bytes.remove(i % n);
            }
            Mutation::Insert(i, b) => bytes.insert(i % (n + 1), b),
            Mutation::Replace(i, b) if n > 0 => bytes[i % n] = b,
            Mutation::Truncate(i) => bytes.truncate(i % (n + 1)),
            _ => {}
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}
