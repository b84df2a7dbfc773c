//! Pass encoding: the buffers of one call, its bind groups (one per chunk), and the compute
//! passes of the count (passes 1 and 2) and the scatter (pass 3).

use crate::params::{params_bytes, params_stride, Output, PARAMS_SIZE};
use crate::plan::{dispatch_size, Plan};
use crate::shaders::binding;
use crate::transfer::pad4;
use crate::GpuNonZero;
use wgpu::util::DeviceExt;

/// Small buffers bound where a call has nothing to bind: the output of passes 1 and 2, and the
/// input of an empty tensor (a binding cannot be empty).
pub(crate) struct Placeholders {
    input: wgpu::Buffer,
    output: wgpu::Buffer,
}

const PLACEHOLDER_BYTES: u64 = 16;

impl Placeholders {
    pub fn new(device: &wgpu::Device) -> Self {
        let buffer = |label| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: PLACEHOLDER_BYTES,
                usage: wgpu::BufferUsages::STORAGE,
                mapped_at_creation: false,
            })
        };
        Placeholders {
            input: buffer("nonzero placeholder input"),
            output: buffer("nonzero placeholder output"),
        }
    }
}

/// The buffers one call binds: the caller's input and count, and its own parameters (one slot
/// per chunk) and pass 2's scratch (tile counts, then offsets within their block; block sums,
/// then block offsets).
pub(crate) struct Call<'a> {
    pub plan: &'a Plan,
    input: &'a wgpu::Buffer,
    count: &'a wgpu::Buffer,
    params: wgpu::Buffer,
    tiles: wgpu::Buffer,
    blocks: wgpu::Buffer,
}

impl GpuNonZero {
    /// Creates the call's own buffers, with parameters for `out`.
    pub(crate) fn call<'a>(
        &self,
        plan: &'a Plan,
        input: &'a wgpu::Buffer,
        count: &'a wgpu::Buffer,
        out: Output,
    ) -> Call<'a> {
        let none = wgpu::BufferUsages::empty();
        let params = self
            .device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("nonzero params"),
                contents: &params_bytes(plan, out, self.limits.offset_alignment),
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            });
        Call {
            plan,
            input,
            count,
            params,
            tiles: self.storage_buffer("nonzero tiles", plan.total_tiles * 4, none),
            blocks: self.storage_buffer("nonzero blocks", plan.blocks * 4, none),
        }
    }

    /// Rewrites the call's parameters for `out` (queued before the next submission).
    pub(crate) fn set_output(&self, call: &Call, out: Output) {
        let bytes = params_bytes(call.plan, out, self.limits.offset_alignment);
        self.queue.write_buffer(&call.params, 0, &bytes);
    }

    /// Passes 1 and 2: tile counts, their offsets, and the total into `count[0]`.
    pub(crate) fn encode_count(&self, enc: &mut wgpu::CommandEncoder, call: &Call) {
        let groups = self.bind_groups(call, None);
        let kind = self.pipelines.kind(call.plan.info.kind);
        self.encode_per_chunk(enc, "nonzero count", &kind.count, call.plan, &groups);
        let scan = self.pipelines.scan();
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("nonzero scan blocks"),
            timestamp_writes: None,
        });
        pass.set_pipeline(&scan.blocks);
        pass.set_bind_group(0, &groups[0], &[]);
        self.dispatch(&mut pass, call.plan.blocks);
        drop(pass);
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("nonzero scan block sums"),
            timestamp_writes: None,
        });
        pass.set_pipeline(&scan.block_sums);
        pass.set_bind_group(0, &groups[0], &[]);
        pass.dispatch_workgroups(1, 1, 1);
    }

    /// Pass 3: the coordinates into the first `out_bytes` of `out`.
    pub(crate) fn encode_scatter(
        &self,
        enc: &mut wgpu::CommandEncoder,
        call: &Call,
        out: &wgpu::Buffer,
        out_bytes: u64,
    ) {
        let groups = self.bind_groups(call, Some((out, out_bytes)));
        let kind = self.pipelines.kind(call.plan.info.kind);
        self.encode_per_chunk(enc, "nonzero scatter", &kind.scatter, call.plan, &groups);
    }

    /// One bind group per chunk: the chunk's slice of the input and its parameters.
    fn bind_groups(&self, call: &Call, out: Option<(&wgpu::Buffer, u64)>) -> Vec<wgpu::BindGroup> {
        let plan = call.plan;
        let size = plan.info.kind.size();
        let stride = params_stride(self.limits.offset_alignment);
        let (out, out_len) = out.unwrap_or((&self.placeholders.output, PLACEHOLDER_BYTES));
        plan.chunks
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let offset = c.start * size;
                let len = pad4(c.n * size).min(call.input.size() - offset);
                let (input, offset, len) = if len == 0 {
                    (&self.placeholders.input, 0, PLACEHOLDER_BYTES)
                } else {
                    (call.input, offset, len)
                };
                let entry = |binding, buffer, offset, len| wgpu::BindGroupEntry {
                    binding,
                    resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer,
                        offset,
                        size: wgpu::BufferSize::new(len),
                    }),
                };
                self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("nonzero chunk"),
                    layout: &self.pipelines.layout,
                    entries: &[
                        entry(binding::INPUT, input, offset, len),
                        entry(
                            binding::PARAMS,
                            &call.params,
                            i as u64 * stride,
                            PARAMS_SIZE,
                        ),
                        entry(
                            binding::TILES,
                            &call.tiles,
                            0,
                            (plan.total_tiles * 4).max(4),
                        ),
                        entry(binding::COUNT, call.count, 0, 4),
                        entry(binding::OUT, out, 0, out_len),
                        entry(binding::BLOCKS, &call.blocks, 0, (plan.blocks * 4).max(4)),
                    ],
                })
            })
            .collect()
    }

    /// One compute pass running `pipeline` over every chunk's tiles, each with its bind group.
    fn encode_per_chunk(
        &self,
        enc: &mut wgpu::CommandEncoder,
        label: &str,
        pipeline: &wgpu::ComputePipeline,
        plan: &Plan,
        groups: &[wgpu::BindGroup],
    ) {
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(label),
            timestamp_writes: None,
        });
        pass.set_pipeline(pipeline);
        for (c, g) in plan.chunks.iter().zip(groups) {
            pass.set_bind_group(0, g, &[]);
            self.dispatch(&mut pass, c.tiles);
        }
    }

    fn dispatch(&self, pass: &mut wgpu::ComputePass<'_>, workgroups: u64) {
        if let Some((x, y)) = dispatch_size(workgroups, self.limits.max_workgroups_x) {
            pass.dispatch_workgroups(x, y, 1);
        }
    }
}
