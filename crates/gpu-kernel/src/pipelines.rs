//! The compiled pipelines of a context: one bind group layout for every pass, pass 2 compiled
//! once per context (it does not read elements), passes 1 and 3 once per element kind on first
//! use. The WGSL text comes from [`crate::shaders`].

use crate::shaders::{
    binding, ModuleKind, ScanPath, ShaderSpec, COUNT_TILES, SCAN_BLOCKS, SCAN_BLOCK_SUMS, SCATTER,
};
use crate::ElementKind;
use std::sync::OnceLock;

/// Pass 2's two dispatches.
pub(crate) struct ScanPipelines {
    pub blocks: wgpu::ComputePipeline,
    pub block_sums: wgpu::ComputePipeline,
}

/// Passes 1 and 3 of one element kind.
pub(crate) struct KindPipelines {
    pub count: wgpu::ComputePipeline,
    pub scatter: wgpu::ComputePipeline,
}

/// The layouts and the lazily compiled pipelines of one device, scan path and workgroup size.
pub(crate) struct Pipelines {
    device: wgpu::Device,
    pub layout: wgpu::BindGroupLayout,
    pipeline_layout: wgpu::PipelineLayout,
    path: ScanPath,
    workgroup_size: u32,
    scan: OnceLock<ScanPipelines>,
    kinds: [OnceLock<KindPipelines>; ElementKind::ALL.len()],
}

impl Pipelines {
    pub fn new(device: &wgpu::Device, path: ScanPath, workgroup_size: u32) -> Self {
        let entries = binding::ALL.map(|(binding, read_only)| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        });
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("nonzero"),
            entries: &entries,
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("nonzero"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        Pipelines {
            device: device.clone(),
            layout,
            pipeline_layout,
            path,
            workgroup_size,
            scan: OnceLock::new(),
            kinds: Default::default(),
        }
    }

    pub fn path(&self) -> ScanPath {
        self.path
    }

    /// Pass 2, compiled on first use.
    pub fn scan(&self) -> &ScanPipelines {
        self.scan.get_or_init(|| {
            let module = self.module(ModuleKind::Scan);
            ScanPipelines {
                blocks: self.pipeline(&module, SCAN_BLOCKS),
                block_sums: self.pipeline(&module, SCAN_BLOCK_SUMS),
            }
        })
    }

    /// Passes 1 and 3 of `kind`, compiled on first use.
    pub fn kind(&self, kind: ElementKind) -> &KindPipelines {
        self.kinds[kind.index()].get_or_init(|| KindPipelines {
            count: self.pipeline(&self.module(ModuleKind::Count(kind)), COUNT_TILES),
            scatter: self.pipeline(&self.module(ModuleKind::Scatter(kind)), SCATTER),
        })
    }

    fn module(&self, module: ModuleKind) -> wgpu::ShaderModule {
        let spec = ShaderSpec {
            module,
            path: self.path,
            workgroup_size: self.workgroup_size,
        };
        self.device
            .create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("nonzero"),
                source: wgpu::ShaderSource::Wgsl(spec.source().into()),
            })
    }

    fn pipeline(&self, module: &wgpu::ShaderModule, entry: &str) -> wgpu::ComputePipeline {
        self.device
            .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(entry),
                layout: Some(&self.pipeline_layout),
                module,
                entry_point: Some(entry),
                compilation_options: Default::default(),
                cache: None,
            })
    }
}
