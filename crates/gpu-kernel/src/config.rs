//! Tuning and test knobs of a context, and the check that a device can run them.

use crate::GpuError;

/// Tuning and test knobs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuConfig {
    /// Threads per workgroup: a power of two from 4 to 256 (and within the device's limit).
    /// A tile is `4 * workgroup_size` elements.
    pub workgroup_size: u32,
    /// Upper bound on the elements bound at once; the device's
    /// `max_storage_buffer_binding_size` bounds it too. Rounded down to a whole number of tiles
    /// (and of the storage offset alignment), at least one such unit.
    pub max_elements_per_chunk: u64,
    /// Upper bound on workgroups along x of one dispatch (the device's limit bounds it too);
    /// beyond it the dispatch becomes 2-D.
    pub max_workgroups_per_dim: u32,
    /// Use subgroup operations when the device has [`wgpu::Features::SUBGROUP`] (default
    /// `true`); `false` forces the workgroup-memory path everywhere.
    /// [`GpuNonZero::uses_subgroups`](crate::GpuNonZero::uses_subgroups) tells which path a
    /// context runs.
    pub use_subgroups: bool,
}

impl Default for GpuConfig {
    fn default() -> Self {
        GpuConfig {
            workgroup_size: 256,
            max_elements_per_chunk: u64::MAX,
            max_workgroups_per_dim: u32::MAX,
            use_subgroups: true,
        }
    }
}

impl GpuConfig {
    /// The workgroup sizes the shaders are written for (powers of two, 4..=256).
    pub(crate) const WORKGROUP_SIZES: [u32; 7] = [4, 8, 16, 32, 64, 128, 256];

    /// Refuses a configuration that a device allowing `max_invocations` threads per workgroup
    /// cannot run.
    pub(crate) fn check(&self, max_invocations: u32) -> Result<(), GpuError> {
        let wg = self.workgroup_size;
        if !Self::WORKGROUP_SIZES.contains(&wg) || wg > max_invocations {
            return Err(GpuError::InvalidConfig(format!(
                "workgroup_size {wg} must be a power of two in 4..=256 within the device limit \
                 {max_invocations}"
            )));
        }
        if self.max_workgroups_per_dim == 0 || self.max_elements_per_chunk == 0 {
            return Err(GpuError::InvalidConfig("limits must be positive".into()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workgroup_sizes_and_limits() {
        let with = |workgroup_size| GpuConfig {
            workgroup_size,
            ..GpuConfig::default()
        };
        for wg in GpuConfig::WORKGROUP_SIZES {
            assert!(with(wg).check(256).is_ok(), "{wg}");
        }
        for wg in [0, 1, 2, 3, 100, 512] {
            assert!(
                matches!(with(wg).check(1024), Err(GpuError::InvalidConfig(_))),
                "{wg}"
            );
        }
        // Within the shader's range but above the device's limit.
        assert!(with(256).check(128).is_err());
        let zero_chunk = GpuConfig {
            max_elements_per_chunk: 0,
            ..GpuConfig::default()
        };
        assert!(zero_chunk.check(256).is_err());
        let zero_x = GpuConfig {
            max_workgroups_per_dim: 0,
            ..GpuConfig::default()
        };
        assert!(zero_x.check(256).is_err());
    }
}
