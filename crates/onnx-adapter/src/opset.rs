//! Which ONNX opsets the NonZero registrations cover, and why NonZero-13 stays open-ended.
//!
//! Pure: no C API. The adapter reads the ranges from [`NONZERO_9`] and [`NONZERO_13`].
//!
//! Loading any custom-op library that registers an op in the ONNX domain switches ONNX Runtime's
//! released-opset check off for every op, whatever version range the op declares: ONNX Runtime
//! registers each custom-op domain's schemas for opsets 1 to 1000 (`CreateCustomRegistry`,
//! onnxruntime/core/session/custom_ops.cc, every release from 1.17 to 1.31), and the check takes
//! the maximum over all registries as the newest released opset
//! (`SchemaRegistryManager::GetLastReleasedOpsetVersions`). Measured on 1.31.1: NonZero-13 ending
//! at 26 instead of `c_int::MAX` leaves an opset-27 `Abs` model loading exactly as before.
//!
//! So the range cannot restore that check; it only decides which kernel runs a NonZero node.
//! Ending NonZero-13 below an opset the host accepts would hand such nodes to ONNX Runtime's
//! built-in kernel, which lacks double, int8, string and the other types (NOT_IMPLEMENTED), so
//! NonZero-13 must cover at least every opset any supported host knows: [`HOSTS`], measured by
//! the `matrix` stage of scripts/test (docs/compatibility.md). No ONNX release has a NonZero
//! newer than 13 up to those opsets; should one appear, the range must end before it.
//!
//! A session that must keep that check can have it: with the session config entry
//! [`ONNX_DOMAIN_KEY`] = "0", set before the library is registered, the library registers its
//! `nonzero` domain only (NonZero there included) and nothing in the ONNX domain. ONNX
//! Runtime's own NonZero then runs ONNX-domain nodes, and `nonzero optimize` can move a model's
//! NonZero nodes to `nonzero.NonZero` so that they still run on this library.

use std::ffi::{c_int, CStr};

/// The session config entry that chooses between the two registrations: "1" (the default)
/// registers NonZero in the ONNX domain too, "0" the `nonzero` domain only.
pub const ONNX_DOMAIN_KEY: &CStr = c"nonzero.onnx_domain";

/// Whether to register in the ONNX domain, from [`ONNX_DOMAIN_KEY`]'s value (`None`: not set).
pub fn onnx_domain(entry: Option<&str>) -> Result<bool, String> {
    match entry.map(str::trim) {
        None | Some("1") => Ok(true),
        Some("0") => Ok(false),
        Some(other) => Err(format!(
            "session config entry {} = \"{other}\" is not valid: use \"1\" (the default: NonZero \
             replaces ONNX Runtime's own) or \"0\" (register the nonzero domain only, leaving the \
             ONNX domain and ONNX Runtime's released-opset check as they are)",
            ONNX_DOMAIN_KEY.to_string_lossy()
        )),
    }
}

/// NonZero-9: opsets 9 to 12 (`start`, `end`, both included).
pub const NONZERO_9: (c_int, c_int) = (9, 12);
/// NonZero-13: opset 13 and every later one.
pub const NONZERO_13: (c_int, c_int) = (13, c_int::MAX);

/// What one ONNX Runtime minor knows of the ONNX domain, measured with a single `Abs` node.
#[cfg(test)] // measured facts, checked by the tests below; registration needs only the ranges
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostOpsets {
    /// ONNX Runtime minor version (1.x).
    pub minor: u32,
    /// Newest opset a model loads at by default (the released-opset check).
    pub released: c_int,
    /// Newest opset a model loads at with `ALLOW_RELEASED_ONNX_OPSET_ONLY=0`.
    pub newest: c_int,
}

/// Every supported ONNX Runtime minor (1.17 to 1.31), from docs/compatibility.md.
#[cfg(test)] // measured facts, checked by the tests below; registration needs only the ranges
pub const HOSTS: &[HostOpsets] = &[
    HostOpsets {
        minor: 17,
        released: 20,
        newest: 20,
    },
    HostOpsets {
        minor: 18,
        released: 21,
        newest: 21,
    },
    HostOpsets {
        minor: 19,
        released: 21,
        newest: 21,
    },
    HostOpsets {
        minor: 20,
        released: 21,
        newest: 21,
    },
    HostOpsets {
        minor: 21,
        released: 22,
        newest: 22,
    },
    HostOpsets {
        minor: 22,
        released: 22,
        newest: 22,
    },
    HostOpsets {
        minor: 23,
        released: 23,
        newest: 23,
    },
    HostOpsets {
        minor: 24,
        released: 25,
        newest: 25,
    },
    HostOpsets {
        minor: 25,
        released: 26,
        newest: 26,
    },
    HostOpsets {
        minor: 26,
        released: 26,
        newest: 26,
    },
    HostOpsets {
        minor: 27,
        released: 26,
        newest: 26,
    },
    HostOpsets {
        minor: 28,
        released: 26,
        newest: 27,
    },
    HostOpsets {
        minor: 29,
        released: 26,
        newest: 27,
    },
    HostOpsets {
        minor: 30,
        released: 26,
        newest: 27,
    },
    HostOpsets {
        minor: 31,
        released: 26,
        newest: 27,
    },
];

/// The entry of [`HOSTS`] for a host version string such as "1.31.1", if it is a supported minor.
#[cfg(test)] // measured facts, checked by the tests below; registration needs only the ranges
pub fn host_opsets(version: &str) -> Option<HostOpsets> {
    let mut parts = version.trim().split('.');
    let major: u32 = parts.next()?.parse().ok()?;
    let minor: u32 = parts.next()?.parse().ok()?;
    if major != 1 {
        return None;
    }
    HOSTS.iter().copied().find(|h| h.minor == minor)
}

/// Whether NonZero at `opset` runs on this library (and not on ONNX Runtime's built-in kernel).
#[cfg(test)] // measured facts, checked by the tests below; registration needs only the ranges
pub fn served(opset: c_int) -> bool {
    (NONZERO_9.0..=NONZERO_9.1).contains(&opset) || (NONZERO_13.0..=NONZERO_13.1).contains(&opset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_contiguous_from_opset_9() {
        assert_eq!(NONZERO_9.0, 9);
        assert_eq!(NONZERO_9.1 + 1, NONZERO_13.0);
        assert!(!served(8));
        assert!((9..=40).all(served));
    }

    #[test]
    fn every_opset_a_supported_host_accepts_is_served() {
        for host in HOSTS {
            assert!(host.released <= host.newest, "{host:?}");
            for opset in 9..=host.newest {
                assert!(
                    served(opset),
                    "1.{}: opset {opset} would fall to the built-in kernel",
                    host.minor
                );
            }
        }
    }

    #[test]
    fn hosts_cover_1_17_to_1_31_in_order() {
        let minors: Vec<u32> = HOSTS.iter().map(|h| h.minor).collect();
        assert_eq!(minors, (17..=31).collect::<Vec<_>>());
        // A newer ONNX Runtime never knows fewer opsets.
        for pair in HOSTS.windows(2) {
            assert!(
                pair[0].released <= pair[1].released && pair[0].newest <= pair[1].newest,
                "{pair:?}"
            );
        }
    }

    #[test]
    fn the_onnx_domain_entry_is_1_or_0_and_names_itself_otherwise() {
        assert_eq!(onnx_domain(None), Ok(true));
        assert_eq!(onnx_domain(Some("1")), Ok(true));
        assert_eq!(onnx_domain(Some(" 0 ")), Ok(false));
        for bad in ["", "false", "2", "no"] {
            let e = onnx_domain(Some(bad)).unwrap_err();
            assert!(
                e.starts_with(&format!(
                    "session config entry nonzero.onnx_domain = \"{bad}\" is not valid: use \"1\""
                )),
                "{e}"
            );
        }
    }

    #[test]
    fn host_versions_parse() {
        assert_eq!(host_opsets("1.17.3").map(|h| h.minor), Some(17));
        assert_eq!(host_opsets(" 1.31.1\n").map(|h| h.released), Some(26));
        assert_eq!(host_opsets("1.16.3"), None);
        assert_eq!(host_opsets("2.17.0"), None);
        assert_eq!(host_opsets("1"), None);
        assert_eq!(host_opsets("one.two"), None);
    }
}
