//! Device acquisition: finding an adapter and opening a device for the kernel.

use crate::{GpuConfig, GpuError, GpuNonZero};

/// Finds an adapter (high performance first) and opens a device with the adapter's real limits
/// and the features of `wanted` it supports.
pub fn request_device(
    wanted: wgpu::Features,
) -> Result<(wgpu::Adapter, wgpu::Device, wgpu::Queue), GpuError> {
    // Vulkan/Metal/DX12 first (quiet on headless Linux), then every backend; WGPU_BACKEND
    // overrides both.
    let find = |backends: wgpu::Backends| {
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
        desc.backends = wgpu::Backends::from_env().unwrap_or(backends);
        let instance = wgpu::Instance::new(desc);
        pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            ..Default::default()
        }))
    };
    let adapter = find(wgpu::Backends::PRIMARY)
        .or_else(|_| find(wgpu::Backends::all()))
        .map_err(GpuError::NoAdapter)?;
    let desc = wgpu::DeviceDescriptor {
        label: Some("nonzero-gpu"),
        required_features: adapter.features() & wanted,
        required_limits: adapter.limits(),
        ..Default::default()
    };
    let (device, queue) =
        pollster::block_on(adapter.request_device(&desc)).map_err(GpuError::RequestDevice)?;
    Ok((adapter, device, queue))
}

impl GpuNonZero {
    /// Finds an adapter, opens a device (see [`request_device`]) with
    /// [`wgpu::Features::SUBGROUP`] when the adapter has it, and makes a context.
    pub fn request(config: GpuConfig) -> Result<Self, GpuError> {
        let (_, device, queue) = request_device(wgpu::Features::SUBGROUP)?;
        GpuNonZero::new(device, queue, config)
    }
}
