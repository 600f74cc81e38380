//! 128-bit digests of forms (sequences of words), and sets of them: the memos of the symmetry
//! reduction (`orbits`) and of barrier rounds (`rounds::LeavesSeen`) keep a digest of each
//! canonical form instead of the form.

use std::hash::{BuildHasherDefault, Hasher};

/// A digest of a canonical form.
pub(crate) type Digest = u128;

/// A 128-bit digest of `form`: two lanes, each a bijection of its state per word (so two
/// forms of one length that differ in one word never collide), with a final avalanche.
/// SipHash, which the standard hasher uses, cost 7% of a symmetric search.
pub(crate) fn digest(form: &[i64]) -> Digest {
    let (mut a, mut b) = (0x243F_6A88_85A3_08D3u64, 0x1319_8A2E_0370_7344u64);
    for &x in form {
        let x = x as u64;
        a = (a ^ x).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        a ^= a >> 29;
        b = (b.rotate_left(23) ^ x).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
        b ^= b >> 32;
    }
    let n = form.len() as u64;
    (u128::from(avalanche(a ^ n)) << 64) | u128::from(avalanche(b.wrapping_add(n)))
}

/// MurmurHash3's 64-bit finalizer.
fn avalanche(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    h ^= h >> 33;
    h = h.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    h ^ (h >> 33)
}

/// A set of digests, hashed by their low bits (a digest is already uniformly spread).
pub(crate) type DigestSet = std::collections::HashSet<Digest, BuildHasherDefault<DigestHasher>>;

#[derive(Default)]
pub(crate) struct DigestHasher(u64);

impl Hasher for DigestHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u128(&mut self, d: u128) {
        self.0 = d as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_of_forms_one_word_apart_differ() {
        let base: Vec<i64> = (0..40).collect();
        let mut seen = std::collections::HashSet::new();
        assert!(seen.insert(digest(&base)));
        for k in 0..base.len() {
            for d in [1, -1, 1 << 40] {
                let mut f = base.clone();
                f[k] += d;
                assert!(seen.insert(digest(&f)), "word {k} changed by {d}");
            }
        }
        assert!(seen.insert(digest(&base[..39])));
        assert!(seen.insert(digest(&[])));
    }
}
