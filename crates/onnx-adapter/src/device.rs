//! Where a NonZero node runs: the CPU (default) or, opted into per session, the GPU.
//!
//! ONNX Runtime users choose with the session config entry `custom_op.NonZero.device`
//! (ONNX Runtime's `custom_op.<op>.<key>` convention), read per kernel through
//! `KernelInfo_GetConfigEntries` on ONNX Runtime 1.24+. Hosts older than that cannot show a custom
//! op its session's config, so there the `NONZERO_ORT_DEVICE` environment variable decides, and a
//! session that asks for the GPU through the config entry gets the CPU and a logged warning.

use std::ffi::CStr;

/// The session config key.
pub const DEVICE_KEY: &CStr = c"custom_op.NonZero.device";
/// The process-wide fallback, read when the session has no (readable) config entry.
pub const DEVICE_ENV: &str = "NONZERO_ORT_DEVICE";
/// When set to `1`, every compute logs at WARNING level where it ran ("ran on gpu (...)").
pub const LOG_DEVICE_ENV: &str = "NONZERO_ORT_LOG_DEVICE";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Device {
    Cpu,
    Gpu,
}

impl Device {
    /// Parses a device value ("cpu" or "gpu", any ASCII case); `source` names where it came from.
    pub fn parse(value: &str, source: &str) -> Result<Device, String> {
        match value.trim().to_ascii_lowercase().as_str() {
            "cpu" => Ok(Device::Cpu),
            "gpu" => Ok(Device::Gpu),
            _ => Err(format!(
                "{source} = \"{value}\" is not a valid NonZero device: use \"cpu\" (the default) or \"gpu\""
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Device;

    #[test]
    fn parses_the_two_devices_and_names_them_in_errors() {
        assert_eq!(Device::parse("gpu", "k"), Ok(Device::Gpu));
        assert_eq!(Device::parse(" CPU ", "k"), Ok(Device::Cpu));
        let e = Device::parse("cuda", "custom_op.NonZero.device").unwrap_err();
        assert!(
            e.contains("custom_op.NonZero.device = \"cuda\"")
                && e.contains("\"cpu\"")
                && e.contains("\"gpu\""),
            "{e}"
        );
    }
}
