//! Where a NonZero node runs: the CPU (default) or, opted into per session, the GPU. Pure
//! decisions, no ONNX Runtime calls: the op reads the inputs and acts on the answer.
//!
//! ONNX Runtime users choose with the session config entry `custom_op.NonZero.device`
//! (ONNX Runtime's `custom_op.<op>.<key>` convention), read per kernel through
//! `KernelInfo_GetConfigEntries` on ONNX Runtime 1.24+. Hosts older than that cannot show a custom
//! op its session's config, so there the `NONZERO_ORT_DEVICE` environment variable decides, and a
//! session that asks for the GPU through the config entry gets the CPU and a logged warning.

use crate::ort::{ConfigEntry, CONFIG_API_VERSION};
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

fn entry_source() -> String {
    format!("session config entry {}", DEVICE_KEY.to_string_lossy())
}

/// At registration, on a host whose kernels cannot read their session's config: whether the
/// options being registered ask for the GPU (`entry`: the config entry as it stands then).
pub fn gpu_requested_unreadable(
    config_readable: bool,
    entry: Option<&str>,
) -> Result<bool, String> {
    match entry {
        Some(value) if !config_readable => {
            Ok(Device::parse(value, &entry_source())? == Device::Gpu)
        }
        _ => Ok(false),
    }
}

/// A node's device and, when the session's wish cannot be honoured, the warning to log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceChoice {
    pub device: Device,
    pub warning: Option<String>,
}

/// A node's device: the session config entry where the host shows it, else `env` (the value of
/// [`DEVICE_ENV`], empty = unset), else the CPU. `gpu_requested_unreadable` comes from
/// registration ([`gpu_requested_unreadable`]); `host_version` is only for the warning.
pub fn choose(
    entry: &ConfigEntry,
    gpu_requested_unreadable: bool,
    env: Option<&str>,
    host_version: &str,
) -> Result<DeviceChoice, String> {
    let mut warning = None;
    let requested = match entry {
        ConfigEntry::Value(value) => Some((value.as_str(), entry_source())),
        ConfigEntry::Absent => None,
        ConfigEntry::Unreadable => {
            if gpu_requested_unreadable {
                warning = Some(format!(
                    "the session config entry {} = \"gpu\" cannot be read by custom ops on ONNX \
                     Runtime {host_version} (KernelInfo_GetConfigEntries needs C API version \
                     {CONFIG_API_VERSION}, ONNX Runtime 1.{CONFIG_API_VERSION} or newer); the node \
                     runs on the CPU (set {DEVICE_ENV}=gpu to use the GPU on this host)",
                    DEVICE_KEY.to_string_lossy()
                ));
            }
            None
        }
    };
    let requested = requested.or_else(|| {
        env.filter(|v| !v.is_empty())
            .map(|v| (v, format!("environment variable {DEVICE_ENV}")))
    });
    let device = match requested {
        Some((value, source)) => Device::parse(value, &source)?,
        None => Device::Cpu,
    };
    Ok(DeviceChoice { device, warning })
}

#[cfg(test)]
mod tests {
    use super::*;

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

    fn value(v: &str) -> ConfigEntry {
        ConfigEntry::Value(v.into())
    }

    fn device(entry: ConfigEntry, env: Option<&str>) -> Result<Device, String> {
        choose(&entry, false, env, "1.31.1").map(|c| c.device)
    }

    #[test]
    fn the_readable_session_entry_wins_over_the_environment() {
        assert_eq!(device(value("cpu"), Some("gpu")), Ok(Device::Cpu));
        assert_eq!(device(value("GPU"), None), Ok(Device::Gpu));
        assert_eq!(device(ConfigEntry::Absent, Some("gpu")), Ok(Device::Gpu));
        assert_eq!(
            device(ConfigEntry::Unreadable, Some("gpu")),
            Ok(Device::Gpu)
        );
    }

    #[test]
    fn nothing_set_or_an_empty_variable_means_the_cpu() {
        assert_eq!(device(ConfigEntry::Absent, None), Ok(Device::Cpu));
        assert_eq!(device(ConfigEntry::Absent, Some("")), Ok(Device::Cpu));
        assert_eq!(device(ConfigEntry::Unreadable, None), Ok(Device::Cpu));
    }

    #[test]
    fn bad_values_name_their_source() {
        let e = device(value("cuda"), None).unwrap_err();
        assert!(e.starts_with("session config entry custom_op.NonZero.device = \"cuda\" is not a valid NonZero device"), "{e}");
        let e = device(ConfigEntry::Absent, Some("tpu")).unwrap_err();
        assert!(
            e.starts_with("environment variable NONZERO_ORT_DEVICE = \"tpu\" is not a valid"),
            "{e}"
        );
        // An empty session entry is a value, not an absence.
        assert!(device(value(""), Some("gpu")).is_err());
    }

    #[test]
    fn an_old_host_warns_when_registration_saw_a_gpu_request() {
        let c = choose(&ConfigEntry::Unreadable, true, None, "1.17.3").unwrap();
        assert_eq!(c.device, Device::Cpu);
        let w = c.warning.unwrap();
        assert!(w.starts_with("the session config entry custom_op.NonZero.device = \"gpu\" cannot be read by custom ops on ONNX Runtime 1.17.3"), "{w}");
        assert!(w.contains("set NONZERO_ORT_DEVICE=gpu"), "{w}");
        // The variable still decides on such a host, and the warning stays.
        let c = choose(&ConfigEntry::Unreadable, true, Some("gpu"), "1.17.3").unwrap();
        assert_eq!(c.device, Device::Gpu);
        assert!(c.warning.is_some());
        // A readable host never warns.
        assert_eq!(
            choose(&value("gpu"), true, None, "1.31.1").unwrap().warning,
            None
        );
    }

    #[test]
    fn registration_flags_a_gpu_request_only_where_kernels_cannot_read_it() {
        assert_eq!(gpu_requested_unreadable(false, Some("gpu")), Ok(true));
        assert_eq!(gpu_requested_unreadable(false, Some("cpu")), Ok(false));
        assert_eq!(gpu_requested_unreadable(false, None), Ok(false));
        assert_eq!(gpu_requested_unreadable(true, Some("gpu")), Ok(false));
        let e = gpu_requested_unreadable(false, Some("cuda")).unwrap_err();
        assert!(e.contains("custom_op.NonZero.device = \"cuda\""), "{e}");
    }
}
