//! What [`crate::optimize_with`] may do, and the same as JSON: the Python entry point
//! (`nonzero_ort.optimize`) passes its keyword arguments as one JSON object, so an option added
//! here reaches Python without a new C ABI. Unknown keys and wrong types are refused by name.

use serde::Deserialize;

/// Which execution provider the rewritten model is for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    #[default]
    Cpu,
    /// ONNX Runtime's CUDA provider: the library's ops are CPU ops, so nothing is rewritten.
    Cuda,
}

impl Provider {
    /// `cpu` or `cuda`.
    pub fn parse(name: &str) -> Option<Provider> {
        match name.to_ascii_lowercase().as_str() {
            "cpu" => Some(Provider::Cpu),
            "cuda" => Some(Provider::Cuda),
            _ => None,
        }
    }

    /// Why this provider rules out every rewrite (empty for the CPU).
    pub fn why_nothing(self) -> &'static str {
        match self {
            Provider::Cpu => "",
            Provider::Cuda => "provider cuda: nothing rewritten. The nonzero ops are CPU ops: under the CUDA execution provider ONNX Runtime would copy their inputs to the host and their outputs back, and CUDA graphs would be ruled out (docs/optimize.md)",
        }
    }
}

/// What [`crate::optimize_with`] may do.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Options {
    /// Also move every remaining ONNX NonZero whose input rank is proven >= 1 to the
    /// `nonzero` domain's NonZero (same semantics), so that a host can leave ONNX Runtime's
    /// ONNX-domain kernels alone. Rank-0 and unknown-rank NonZero stay.
    pub nonzero_domain: bool,
    pub provider: Provider,
    /// Leave out the model-local functions that let a rewritten model run without the library
    /// (`--no-fallback`; see `crate::fallback`).
    pub no_fallback: bool,
}

impl Options {
    pub(crate) fn rewrites_nothing(&self) -> bool {
        self.provider != Provider::Cpu
    }

    /// Options from a JSON object such as `{"nonzero_domain": true, "provider": "cuda",
    /// "no_fallback": false}`; absent keys keep their defaults.
    pub fn from_json(text: &str) -> Result<Options, String> {
        serde_json::from_str(text).map_err(|e| format!("options: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_options_name_what_is_wrong() {
        assert_eq!(Options::from_json("{}"), Ok(Options::default()));
        let all = Options::from_json(
            r#"{"nonzero_domain": true, "provider": "cuda", "no_fallback": true}"#,
        );
        assert_eq!(
            all,
            Ok(Options {
                nonzero_domain: true,
                provider: Provider::Cuda,
                no_fallback: true
            })
        );
        let unknown = Options::from_json(r#"{"static": true}"#).unwrap_err();
        assert!(
            unknown.starts_with("options: unknown field `static`"),
            "{unknown}"
        );
        let provider = Options::from_json(r#"{"provider": "tpu"}"#).unwrap_err();
        assert!(
            provider.contains("unknown variant `tpu`, expected `cpu` or `cuda`"),
            "{provider}"
        );
        let typed = Options::from_json(r#"{"nonzero_domain": 1}"#).unwrap_err();
        assert!(
            typed.contains("invalid type: integer `1`, expected a boolean"),
            "{typed}"
        );
    }
}
