//! [`GpuNonZero`]: a NonZero context for one device (its limits, scan path, pipelines and
//! placeholder buffers). The compute entry points are in `resident.rs` (device buffers) and
//! `host.rs` (host data); how a call is split is in `plan.rs`.

use crate::encode::Placeholders;
use crate::kept::Kept;
use crate::pipelines::Pipelines;
use crate::plan::{self, Chunking, Plan, PlanLimits};
use crate::shaders::ScanPath;
use crate::{ElementKind, GpuConfig, GpuError};
use nonzero_core::DataType;
use std::sync::Mutex;

/// A NonZero context for one device: bind group layout, pipelines per element kind, limits.
pub struct GpuNonZero {
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    pub(crate) config: GpuConfig,
    pub(crate) limits: PlanLimits,
    pub(crate) pipelines: Pipelines,
    pub(crate) placeholders: Placeholders,
    /// The host path's input and staging buffers, kept from call to call (kept.rs).
    pub(crate) kept: Mutex<Kept>,
}

impl std::fmt::Debug for GpuNonZero {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuNonZero")
            .field("config", &self.config)
            .field("subgroups", &self.uses_subgroups())
            .finish_non_exhaustive()
    }
}

impl GpuNonZero {
    /// A context for an existing device. Pipelines are compiled on first use of each kind.
    ///
    /// The subgroup scans run when `config.use_subgroups` is set and the device was opened with
    /// [`wgpu::Features::SUBGROUP`] (see [`crate::request_device`]); otherwise the
    /// workgroup-memory scans.
    pub fn new(
        device: wgpu::Device,
        queue: wgpu::Queue,
        config: GpuConfig,
    ) -> Result<Self, GpuError> {
        let device_limits = device.limits();
        config.check(device_limits.max_compute_invocations_per_workgroup)?;
        let path = if config.use_subgroups && device.features().contains(wgpu::Features::SUBGROUP) {
            ScanPath::Subgroup
        } else {
            ScanPath::Workgroup
        };
        Ok(GpuNonZero {
            limits: PlanLimits::new(&device_limits, &config),
            pipelines: Pipelines::new(&device, path, config.workgroup_size),
            placeholders: Placeholders::new(&device),
            kept: Mutex::default(),
            device,
            queue,
            config,
        })
    }

    /// The device.
    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }

    /// The queue.
    pub fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    /// The configuration.
    pub fn config(&self) -> &GpuConfig {
        &self.config
    }

    /// Whether the kernels use subgroup operations: [`GpuConfig::use_subgroups`] and the
    /// device was opened with [`wgpu::Features::SUBGROUP`]. Otherwise they use the
    /// workgroup-memory scan.
    pub fn uses_subgroups(&self) -> bool {
        self.pipelines.path() == ScanPath::Subgroup
    }

    /// Compiles the pipelines of every kind now rather than on first use.
    pub fn warm_up(&self) {
        self.pipelines.scan();
        for kind in ElementKind::ALL {
            self.pipelines.kind(kind);
        }
    }

    /// How an input of this type and shape is split into chunks, tiles and dispatches.
    pub fn chunking(&self, dtype: DataType, shape: &[usize]) -> Result<Chunking, GpuError> {
        Ok(self.plan(dtype, shape)?.chunking(&self.limits))
    }

    pub(crate) fn plan(&self, dtype: DataType, shape: &[usize]) -> Result<Plan, GpuError> {
        plan::plan(dtype, shape, &self.limits)
    }
}
