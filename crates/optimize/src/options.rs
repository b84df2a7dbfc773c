//! What [`crate::optimize_with`] may do, and the same as JSON: the Python entry point
//! (`nonzero_ort.optimize`) passes its keyword arguments as one JSON object, so an option added
//! here reaches Python without a new C ABI. Unknown keys and wrong types are refused by name.

use serde::Deserialize;
use std::collections::BTreeMap;

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
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Options {
    /// Also move every remaining ONNX NonZero whose input rank is proven >= 1 to the
    /// `nonzero` domain's NonZero (same semantics), so that a host can leave ONNX Runtime's
    /// ONNX-domain kernels alone. Rank-0 and unknown-rank NonZero stay.
    pub nonzero_domain: bool,
    pub provider: Provider,
    /// Leave out the model-local functions that let a rewritten model run without the library
    /// (`--no-fallback`; see nonzero-emit-library's `fallback`).
    pub no_fallback: bool,
    /// Static mode (`--static`, nonzero-emit-static): a model of standard ops with no
    /// data-dependent shape, for compilers and accelerators that refuse them.
    #[serde(rename = "static")]
    pub static_shapes: bool,
    /// Static mode: the shape of each named graph input (`--input-shape NAME=D0,D1`), over what
    /// the model declares.
    pub input_shapes: BTreeMap<String, Vec<i64>>,
    /// Static mode: the most coordinates or rows a data-dependent output holds (`--capacity`);
    /// default the mask's element count.
    pub capacity: Option<i64>,
    /// Static mode: the capacity of the selections that reach one graph output of the main graph
    /// (`--capacity NAME=N`; Python `capacity={"NAME": N}`), in place of `capacity` for them.
    pub output_capacities: BTreeMap<String, i64>,
    /// Static mode: write the model even when data-dependent nodes remain (they are reported).
    pub allow_dynamic: bool,
    /// Static mode: the toolchain the forms are for (`--target`; JSON `"target": "qnn"`):
    /// generic (the default), qnn, litert or rknn (nonzero-emit-static's `Target`).
    #[serde(deserialize_with = "target_named")]
    pub target: nonzero_emit_static::Target,
}

fn target_named<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<nonzero_emit_static::Target, D::Error> {
    let name = String::deserialize(d)?;
    nonzero_emit_static::Target::parse(&name).ok_or_else(|| {
        serde::de::Error::custom(format!(
            "unknown target `{name}`, expected one of {}",
            nonzero_emit_static::Target::NAMES.join(", ")
        ))
    })
}

impl Options {
    pub(crate) fn rewrites_nothing(&self) -> bool {
        self.provider != Provider::Cpu
    }

    /// What the static target is asked to do.
    pub(crate) fn static_settings(&self) -> nonzero_emit_static::Settings {
        nonzero_emit_static::Settings {
            input_shapes: self.input_shapes.clone(),
            capacity: self.capacity,
            output_capacities: self.output_capacities.clone(),
            allow_dynamic: self.allow_dynamic,
            target: self.target,
        }
    }

    /// Refuses options that make no sense together, naming them: static-mode settings without
    /// `static`, a capacity below 1, an input shape with a negative size.
    pub fn check(&self) -> Result<(), String> {
        if !self.static_shapes {
            let stray = [
                (
                    "input_shapes (--input-shape)",
                    !self.input_shapes.is_empty(),
                ),
                (
                    "capacity (--capacity)",
                    self.capacity.is_some() || !self.output_capacities.is_empty(),
                ),
                ("allow_dynamic (--allow-dynamic)", self.allow_dynamic),
                ("target (--target)", self.target.portable()),
            ];
            if let Some((name, _)) = stray.iter().find(|(_, set)| *set) {
                return Err(format!(
                    "options: {name} applies only with static (--static)"
                ));
            }
        }
        if self.static_shapes && self.nonzero_domain {
            return Err("options: nonzero_domain (--nonzero-domain) moves NonZero to the library's domain, and static (--static) writes standard ONNX ops only; choose one".to_string());
        }
        if let Some(c) = self.capacity.filter(|&c| c < 1) {
            return Err(format!("options: capacity must be at least 1, got {c}"));
        }
        for (name, &c) in &self.output_capacities {
            if c < 1 {
                return Err(format!(
                    "options: the capacity of the output '{name}' must be at least 1, got {c}"
                ));
            }
        }
        for (name, dims) in &self.input_shapes {
            if let Some(d) = dims.iter().find(|&&d| d < 0) {
                return Err(format!(
                    "options: input shape of '{name}' has the size {d}; sizes are 0 or more"
                ));
            }
        }
        Ok(())
    }

    /// Options from a JSON object such as `{"nonzero_domain": true, "provider": "cuda",
    /// "no_fallback": false}`; absent keys keep their defaults.
    pub fn from_json(text: &str) -> Result<Options, String> {
        let options: Options = serde_json::from_str(text).map_err(|e| format!("options: {e}"))?;
        options.check()?;
        Ok(options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_is_a_name_and_needs_static() {
        let qnn = Options::from_json(r#"{"static": true, "target": "qnn"}"#).unwrap();
        assert_eq!(qnn.target, nonzero_emit_static::Target::Qnn);
        assert_eq!(
            qnn.static_settings().target,
            nonzero_emit_static::Target::Qnn
        );
        let generic = Options::from_json(r#"{"target": "generic"}"#).unwrap();
        assert_eq!(generic, Options::default());
        let unknown = Options::from_json(r#"{"static": true, "target": "tpu"}"#).unwrap_err();
        assert!(
            unknown.contains("unknown target `tpu`, expected one of generic, qnn, litert, rknn"),
            "{unknown}"
        );
        assert_eq!(
            Options::from_json(r#"{"target": "litert"}"#).unwrap_err(),
            "options: target (--target) applies only with static (--static)"
        );
    }

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
                no_fallback: true,
                ..Options::default()
            })
        );
        let unknown = Options::from_json(r#"{"statik": true}"#).unwrap_err();
        assert!(
            unknown.starts_with("options: unknown field `statik`"),
            "{unknown}"
        );
        let fixed = Options::from_json(
            r#"{"static": true, "input_shapes": {"x": [2, 3]}, "capacity": 100}"#,
        )
        .unwrap();
        assert!(fixed.static_shapes);
        assert_eq!(fixed.input_shapes["x"], [2, 3]);
        assert_eq!(fixed.capacity, Some(100));
        for (json, why) in [
            (
                r#"{"capacity": 5}"#,
                "capacity (--capacity) applies only with static",
            ),
            (
                r#"{"static": true, "capacity": 0}"#,
                "capacity must be at least 1, got 0",
            ),
            (
                r#"{"static": true, "input_shapes": {"x": [2, -1]}}"#,
                "input shape of 'x' has the size -1",
            ),
        ] {
            let e = Options::from_json(json).unwrap_err();
            assert!(e.contains(why), "{json}: {e}");
        }
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
