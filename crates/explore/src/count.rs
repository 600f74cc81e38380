//! Exact orbit sizes. An orbit of a leaf under the permutations of the classes of
//! interchangeable threads has `|G| / |Aut|` members, `|G|` the product of the classes'
//! factorials: 21 threads already make `|G|` overflow 64 bits, and 35 overflow 128, while the
//! orbit itself (`C(29, k)` for one store and 29 loaders) is small. The quotient is computed
//! in `u128` where both fit, and otherwise over integers of any size; an orbit of more than
//! `u128::MAX` executions saturates there, and the count is then a lower bound
//! ([`at_least`]).

/// A count of executions: exact, or, once it saturated at `u128::MAX`, at least that.
pub type Count = u128;

/// Whether a count saturated: it says "at least", not "exactly".
pub fn at_least(c: Count) -> bool {
    c == Count::MAX
}

/// `all / aut` where `all` is the product of the factorials of `classes` and `aut` the sum of
/// `terms`, each the product of the factorials of its sizes; the division is exact (`aut` is
/// the order of a subgroup of the classes' permutations). Saturates at `u128::MAX`.
pub(crate) fn orbit_size<'a>(
    classes: &[usize],
    terms: impl Iterator<Item = &'a [usize]> + Clone,
) -> Count {
    let small = || -> Option<u128> {
        let all = product_of_factorials(classes.iter().copied())?;
        let mut aut = 0u128;
        for t in terms.clone() {
            aut = aut.checked_add(product_of_factorials(t.iter().copied())?)?;
        }
        Some(all / aut.max(1))
    };
    if let Some(q) = small() {
        return q;
    }
    let all = Big::product_of_factorials(classes.iter().copied());
    let mut aut = Big::from(0);
    for t in terms {
        aut.add(&Big::product_of_factorials(t.iter().copied()));
    }
    if aut.is_zero() {
        aut = Big::from(1);
    }
    all.quotient(&aut).to_u128_saturating()
}

fn product_of_factorials(sizes: impl Iterator<Item = usize>) -> Option<u128> {
    let mut p = 1u128;
    for n in sizes {
        for k in 2..=n as u128 {
            p = p.checked_mul(k)?;
        }
    }
    Some(p)
}

/// An unsigned integer of any size: little-endian 32-bit limbs, no trailing zero limb.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Big(Vec<u32>);

impl From<u32> for Big {
    fn from(x: u32) -> Self {
        let mut b = Big(vec![x]);
        b.trim();
        b
    }
}

impl Big {
    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }

    fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    fn product_of_factorials(sizes: impl Iterator<Item = usize>) -> Big {
        let mut p = Big::from(1);
        for n in sizes {
            for k in 2..=n {
                p.mul_small(u32::try_from(k).unwrap_or(u32::MAX));
            }
        }
        p
    }

    fn mul_small(&mut self, k: u32) {
        let mut carry = 0u64;
        for limb in &mut self.0 {
            let x = u64::from(*limb) * u64::from(k) + carry;
            *limb = x as u32;
            carry = x >> 32;
        }
        if carry > 0 {
            self.0.push(carry as u32);
        }
        self.trim();
    }

    fn add(&mut self, other: &Big) {
        if self.0.len() < other.0.len() {
            self.0.resize(other.0.len(), 0);
        }
        let mut carry = 0u64;
        for (i, limb) in self.0.iter_mut().enumerate() {
            let x = u64::from(*limb) + u64::from(other.0.get(i).copied().unwrap_or(0)) + carry;
            *limb = x as u32;
            carry = x >> 32;
        }
        if carry > 0 {
            self.0.push(carry as u32);
        }
    }

    /// `self - other`, for `other <= self`.
    fn sub(&mut self, other: &Big) {
        let mut borrow = 0i64;
        for (i, limb) in self.0.iter_mut().enumerate() {
            let x = i64::from(*limb) - i64::from(other.0.get(i).copied().unwrap_or(0)) - borrow;
            (*limb, borrow) = if x < 0 {
                ((x + (1 << 32)) as u32, 1)
            } else {
                (x as u32, 0)
            };
        }
        self.trim();
    }

    fn bits(&self) -> usize {
        self.0
            .last()
            .map_or(0, |&top| 32 * self.0.len() - top.leading_zeros() as usize)
    }

    fn bit(&self, i: usize) -> bool {
        self.0.get(i / 32).is_some_and(|&l| l >> (i % 32) & 1 == 1)
    }

    /// `self * 2 + bit`.
    fn shift_in(&mut self, bit: bool) {
        let mut carry = u32::from(bit);
        for limb in &mut self.0 {
            let top = *limb >> 31;
            *limb = *limb << 1 | carry;
            carry = top;
        }
        if carry > 0 {
            self.0.push(carry);
        }
    }

    fn set_bit(&mut self, i: usize) {
        if self.0.len() <= i / 32 {
            self.0.resize(i / 32 + 1, 0);
        }
        self.0[i / 32] |= 1 << (i % 32);
    }

    fn cmp(&self, other: &Big) -> std::cmp::Ordering {
        self.0
            .len()
            .cmp(&other.0.len())
            .then_with(|| self.0.iter().rev().cmp(other.0.iter().rev()))
    }

    /// `self / d` (rounded down), `d` not zero: long division, one bit at a time (the numbers
    /// are a few hundred bits at most, and this runs once per leaf whose orbit is that large).
    fn quotient(&self, d: &Big) -> Big {
        let (mut q, mut r) = (Big(vec![]), Big(vec![]));
        for i in (0..self.bits()).rev() {
            r.shift_in(self.bit(i));
            if r.cmp(d) != std::cmp::Ordering::Less {
                r.sub(d);
                q.set_bit(i);
            }
        }
        q
    }

    fn to_u128_saturating(&self) -> u128 {
        if self.bits() > 128 {
            return u128::MAX;
        }
        self.0
            .iter()
            .rev()
            .fold(0u128, |x, &l| x << 32 | u128::from(l))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binomial(n: u128, k: u128) -> u128 {
        (0..k).fold(1u128, |c, i| c * (n - i) / (i + 1))
    }

    #[test]
    fn orbits_past_64_bits_of_factorials_are_exact() {
        // 29 interchangeable threads, k of which read alike and the rest alike: C(29, k)
        // members; 29! overflows 64 bits, so the quotient needs the wide path.
        for k in 0..=29 {
            let terms = [vec![k, 29 - k]];
            let size = orbit_size(&[29], terms.iter().map(Vec::as_slice));
            assert_eq!(size, binomial(29, k as u128), "k = {k}");
        }
        // 40 threads: 40! overflows 128 bits; C(40, 20) = 137846528820.
        let terms = [vec![20, 20]];
        assert_eq!(
            orbit_size(&[40], terms.iter().map(Vec::as_slice)),
            137_846_528_820
        );
        // An automorphism group that is a sum: two renamings give the least form, each with
        // 3! orders of alike threads: 40! / 12, more than u128 holds: saturated.
        let terms = [vec![3], vec![3]];
        assert!(at_least(orbit_size(&[40], terms.iter().map(Vec::as_slice))));
    }

    #[test]
    fn big_division_matches_u128() {
        // 34! fits in 128 bits: the wide path must agree with the narrow one.
        let all = Big::product_of_factorials([34].into_iter());
        let narrow = product_of_factorials([34].into_iter()).expect("34! fits");
        assert_eq!(all.to_u128_saturating(), narrow);
        let d = Big::product_of_factorials([17, 5].into_iter());
        let dn = product_of_factorials([17, 5].into_iter()).expect("fits");
        assert_eq!(all.quotient(&d).to_u128_saturating(), narrow / dn);
        let mut s = all.clone();
        s.sub(&d);
        assert_eq!(s.to_u128_saturating(), narrow - dn);
    }
}
