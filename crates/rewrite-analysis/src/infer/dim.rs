//! Symbolic sizes: a polynomial with integer coefficients over atoms. An atom is a `dim_param`
//! name, a fresh name for a size known only at run time (`?` + what made it), or an opaque
//! function of other sizes written in canonical text (`floor(...)`). Equal canonical forms are
//! equal sizes; anything else is "not proven equal", never "proven different".

use std::collections::BTreeMap;
use std::fmt;

/// The longest size text a report writes ([`Dim::report_text`]).
pub const MAX_SIZE_TEXT: usize = 120;

/// One size, in canonical form: monomial (sorted atoms, repeated for powers) -> coefficient,
/// with no zero coefficients.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Dim(BTreeMap<Vec<String>, i64>);

impl Dim {
    pub fn from_static(value: i64) -> Dim {
        let mut terms = BTreeMap::new();
        if value != 0 {
            terms.insert(vec![], value);
        }
        Dim(terms)
    }

    /// A named size: equal only to the same name.
    pub fn symbol(name: &str) -> Dim {
        Dim(BTreeMap::from([(vec![name.to_string()], 1)]))
    }

    /// A `dim_param`: names that could be mistaken for the rewriter's own atoms (fresh `?...`,
    /// opaque `floor(...)`) are escaped with a leading `$`.
    pub fn param(name: &str) -> Dim {
        if name.starts_with(['?', '$']) || name.contains('(') {
            Dim::symbol(&format!("${name}"))
        } else {
            Dim::symbol(name)
        }
    }

    /// A size nothing is known about, named after what made it (a tensor and axis, a NonZero's
    /// count): equal only to itself.
    pub fn fresh(what: &str) -> Dim {
        Dim::symbol(&format!("?{what}"))
    }

    pub fn as_static(&self) -> Option<i64> {
        match self.0.len() {
            0 => Some(0),
            1 => self.0.get(&Vec::new()).copied(),
            _ => None,
        }
    }

    /// True when both are provably the same size.
    pub fn same(&self, other: &Dim) -> bool {
        self == other
    }

    /// True for a size about which nothing is known (one fresh atom).
    pub fn is_unknown(&self) -> bool {
        matches!(self.0.iter().next(), Some((m, 1)) if self.0.len() == 1 && m.len() == 1 && m[0].starts_with('?'))
    }

    /// The size as reports write it: its canonical text up to [`MAX_SIZE_TEXT`] characters;
    /// past that, what it depends on (the tensor of its first size known only at run time, or
    /// its first named size), so that one unfolded size cannot fill a report.
    pub fn report_text(&self) -> String {
        let text = self.to_string();
        if text.len() <= MAX_SIZE_TEXT {
            return text;
        }
        if let Some(tensor) = self.first_unknown_tensor() {
            return format!("(depends on {tensor}, whose size is not fixed)");
        }
        match self.0.keys().flatten().next() {
            Some(atom) => format!("(a size of {} characters over '{atom}')", text.len()),
            None => format!("(a size of {} characters)", text.len()),
        }
    }

    /// The tensor whose size, known only at run time, this size first depends on: the fresh
    /// atom `?name.axis` (or `?nnz:name`, a NonZero's count) first in its text.
    pub fn first_unknown_tensor(&self) -> Option<String> {
        let text = self.to_string();
        let rest = &text[text.find('?')? + 1..];
        let atom = &rest[..rest
            .find([')', '(', '*', '+', ' ', ','])
            .unwrap_or(rest.len())];
        let atom = atom.strip_prefix("nnz:").unwrap_or(atom);
        let name = match atom.rsplit_once('.') {
            Some((name, axis)) if !axis.is_empty() && axis.bytes().all(|b| b.is_ascii_digit()) => {
                name
            }
            _ => atom,
        };
        (!name.is_empty()).then(|| name.to_string())
    }

    /// True when some atom is (or contains) a fresh size, which only its own graph can name.
    pub fn mentions_fresh(&self) -> bool {
        self.0.keys().flatten().any(|a| a.contains('?'))
    }

    /// How many terms: a bound on the work and text an expression may grow to.
    pub fn terms(&self) -> usize {
        self.0.len()
    }

    /// True when every coefficient is non-negative (a sum of products of sizes is a size).
    pub fn non_negative(&self) -> bool {
        self.0.values().all(|&c| c >= 0)
    }

    /// A size whose arithmetic overflowed an int64: an opaque atom of the operands (never a
    /// wrong fixed size; equal operands give equal atoms).
    fn overflow(a: &Dim, op: &str, b: &Dim) -> Dim {
        Dim::symbol(&format!("?overflow(({a}){op}({b}))"))
    }

    pub fn add(&self, other: &Dim) -> Dim {
        let mut terms = self.0.clone();
        for (m, c) in &other.0 {
            let entry = terms.entry(m.clone()).or_insert(0);
            let Some(sum) = entry.checked_add(*c) else {
                return Dim::overflow(self, "+", other);
            };
            *entry = sum;
            if *entry == 0 {
                terms.remove(m);
            }
        }
        Dim(terms)
    }

    pub fn neg(&self) -> Dim {
        let terms: Option<BTreeMap<Vec<String>, i64>> = self
            .0
            .iter()
            .map(|(m, c)| Some((m.clone(), c.checked_neg()?)))
            .collect();
        terms.map_or_else(|| Dim::overflow(&Dim::from_static(0), "-", self), Dim)
    }

    pub fn sub(&self, other: &Dim) -> Dim {
        self.add(&other.neg())
    }

    pub fn mul(&self, other: &Dim) -> Dim {
        let mut out = Dim::from_static(0);
        for (ma, ca) in &self.0 {
            for (mb, cb) in &other.0 {
                let mut m: Vec<String> = ma.iter().chain(mb).cloned().collect();
                m.sort();
                let Some(c) = ca.checked_mul(*cb) else {
                    return Dim::overflow(self, "*", other);
                };
                out = out.add(&Dim(BTreeMap::from([(m, c)])));
            }
        }
        out
    }

    /// `self / divisor` when it divides exactly as polynomials (every term by a one-term
    /// divisor), else `None`.
    pub fn exact_div(&self, divisor: &Dim) -> Option<Dim> {
        let [(dm, &dc)] = divisor.0.iter().collect::<Vec<_>>()[..] else {
            return None;
        };
        if dc == 0 {
            return None;
        }
        let mut out = BTreeMap::new();
        for (m, &c) in &self.0 {
            if c % dc != 0 {
                return None;
            }
            let mut rest = m.clone();
            for atom in dm {
                let at = rest.iter().position(|a| a == atom)?;
                rest.remove(at);
            }
            out.insert(rest, c / dc);
        }
        Some(Dim(out))
    }

    /// `floor(self / divisor)` for a positive divisor: exact where possible, else an opaque atom
    /// of the canonical operands (equal operands give equal atoms).
    pub fn floor_div(&self, divisor: &Dim) -> Dim {
        match (self.as_static(), divisor.as_static()) {
            (Some(a), Some(b)) if b > 0 => Dim::from_static(a.div_euclid(b)),
            _ => self
                .exact_div(divisor)
                .unwrap_or_else(|| Dim::symbol(&format!("floor(({self})/({divisor}))"))),
        }
    }

    /// `ceil(self / divisor)` for a positive divisor.
    pub fn ceil_div(&self, divisor: &Dim) -> Dim {
        self.add(divisor)
            .sub(&Dim::from_static(1))
            .floor_div(divisor)
    }

    /// The product of `dims`.
    pub fn product<'a>(dims: impl IntoIterator<Item = &'a Dim>) -> Dim {
        dims.into_iter()
            .fold(Dim::from_static(1), |acc, d| acc.mul(d))
    }
}

impl From<i64> for Dim {
    fn from(value: i64) -> Dim {
        Dim::from_static(value)
    }
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return write!(f, "0");
        }
        for (i, (m, c)) in self.0.iter().enumerate() {
            let sign = if *c < 0 {
                "-"
            } else if i > 0 {
                "+"
            } else {
                ""
            };
            let magnitude = c.unsigned_abs();
            let factors = m.join("*");
            match (magnitude, m.is_empty()) {
                (_, true) => write!(f, "{sign}{magnitude}")?,
                (1, false) => write!(f, "{sign}{factors}")?,
                _ => write!(f, "{sign}{magnitude}*{factors}")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Dim;

    #[test]
    fn canonical_forms_compare() {
        let (n, h) = (Dim::symbol("N"), Dim::symbol("H"));
        assert_eq!(
            n.mul(&h).mul(&4.into()),
            h.mul(&n).add(&h.mul(&n).mul(&3.into()))
        );
        assert_eq!(n.mul(&h).exact_div(&h), Some(n.clone()));
        assert_eq!(n.add(&1.into()).exact_div(&h), None);
        assert!(!n.floor_div(&2.into()).same(&n));
        assert_eq!(n.floor_div(&2.into()), n.floor_div(&2.into()));
        assert_eq!(Dim::from(7).ceil_div(&2.into()).as_static(), Some(4));
        assert_eq!(n.mul(&2.into()).to_string(), "2*N");
        assert!(Dim::fresh("x.0").is_unknown() && !n.is_unknown());
    }

    #[test]
    fn overflow_is_never_a_fixed_size() {
        let big = Dim::from(1 << 32);
        let square = big.mul(&big);
        assert_eq!(square.as_static(), None, "{square}");
        assert!(square.mentions_fresh());
        assert_eq!(square, Dim::from(1 << 32).mul(&Dim::from(1 << 32)));
        let max = Dim::from(i64::MAX);
        assert_eq!(max.add(&1.into()).as_static(), None);
        assert_eq!(Dim::from(i64::MIN).neg().as_static(), None);
        assert_eq!(max.mul(&1.into()).as_static(), Some(i64::MAX));
        let n = Dim::symbol("N");
        assert_eq!(n.mul(&max).mul(&2.into()).as_static(), None);
    }

    #[test]
    fn long_sizes_are_reported_by_what_they_depend_on() {
        let pad = Dim::fresh("/model/transform/Pad_output_0.1");
        let mut long = pad.clone();
        for _ in 0..12 {
            long = long.add(&(-1).into()).floor_div(&2.into());
        }
        assert!(long.to_string().len() > 120, "{long}");
        assert_eq!(
            long.report_text(),
            "(depends on /model/transform/Pad_output_0, whose size is not fixed)"
        );
        assert_eq!(pad.report_text(), "?/model/transform/Pad_output_0.1");
        let count = Dim::fresh("nnz:/NonZero_output_0");
        assert_eq!(
            count.first_unknown_tensor().as_deref(),
            Some("/NonZero_output_0")
        );
        let params = (0..40).fold(Dim::from(0), |d, i| {
            d.add(&Dim::param(&format!("n{i}")).mul(&Dim::param("batch")))
        });
        assert_eq!(
            params.report_text(),
            format!(
                "(a size of {} characters over 'batch')",
                params.to_string().len()
            )
        );
    }
}
