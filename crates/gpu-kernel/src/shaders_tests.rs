//! Every WGSL variant through naga (wgpu's own shader compiler front end), without an adapter.

use super::*;
use crate::params::{MODE_DML, MODE_ONNX};
use crate::plan::ITEMS;
use crate::GpuConfig;
use naga::valid::{Capabilities, ValidationFlags, Validator};

/// Parses a module, or panics with naga's message pointing into the source.
fn parse(spec: &ShaderSpec) -> naga::Module {
    let src = spec.source();
    naga::front::wgsl::parse_str(&src)
        .unwrap_or_else(|e| panic!("{spec:?} does not parse:\n{}", e.emit_to_string(&src)))
}

/// The capabilities a device on `path` has: the workgroup-memory path must need none.
fn capabilities(path: ScanPath) -> Capabilities {
    match path {
        ScanPath::Subgroup => Capabilities::SUBGROUP,
        ScanPath::Workgroup => Capabilities::empty(),
    }
}

fn validate(spec: &ShaderSpec, module: &naga::Module, caps: Capabilities) -> Result<(), String> {
    Validator::new(ValidationFlags::all(), caps)
        .validate(module)
        .map(drop)
        .map_err(|e| e.emit_to_string(&spec.source()))
}

/// Every scan path x workgroup size x module (pass 2, and passes 1 and 3 for every element kind):
/// it parses, validates, and has exactly its entry points, compute, at the workgroup size.
#[test]
fn every_variant_parses_and_validates() {
    let mut checked = 0;
    for path in ScanPath::ALL {
        for workgroup_size in GpuConfig::WORKGROUP_SIZES {
            for kind in ModuleKind::all() {
                let spec = ShaderSpec {
                    module: kind,
                    path,
                    workgroup_size,
                };
                let module = parse(&spec);
                if let Err(e) = validate(&spec, &module, capabilities(path)) {
                    panic!("{spec:?} does not validate:\n{e}");
                }
                let entries: Vec<_> = module
                    .entry_points
                    .iter()
                    .map(|e| e.name.as_str())
                    .collect();
                assert_eq!(entries, kind.entry_points(), "{spec:?}");
                for e in &module.entry_points {
                    assert_eq!(e.stage, naga::ShaderStage::Compute, "{spec:?}");
                    assert_eq!(e.workgroup_size, [workgroup_size, 1, 1], "{spec:?}");
                }
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 2 * 7 * (1 + 2 * 6));
}

/// The capability check means something: the subgroup modules need `SUBGROUP`, which a device
/// without the feature lacks (the workgroup-memory modules validate without it above).
#[test]
fn only_the_subgroup_path_needs_subgroups() {
    for kind in ModuleKind::all() {
        let spec = ShaderSpec {
            module: kind,
            path: ScanPath::Subgroup,
            workgroup_size: 256,
        };
        let module = parse(&spec);
        assert!(
            validate(&spec, &module, Capabilities::empty()).is_err(),
            "{spec:?} validated without SUBGROUP"
        );
    }
}

/// A global `const` of a parsed module, as u32.
fn constant(module: &naga::Module, name: &str) -> u32 {
    let (_, c) = module
        .constants
        .iter()
        .find(|(_, c)| c.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("no const {name}"));
    match module.global_expressions[c.init] {
        naga::Expression::Literal(naga::Literal::U32(v)) => v,
        ref e => panic!("const {name} is {e:?}"),
    }
}

/// The WGSL constants that Rust also uses agree with Rust's.
#[test]
fn constants_agree_with_rust() {
    for workgroup_size in GpuConfig::WORKGROUP_SIZES {
        let spec = ShaderSpec {
            module: ModuleKind::Scatter(ElementKind::Byte),
            path: ScanPath::Workgroup,
            workgroup_size,
        };
        let module = parse(&spec);
        assert_eq!(constant(&module, "WG"), workgroup_size);
        assert_eq!(u64::from(constant(&module, "ITEMS")), ITEMS);
        assert_eq!(constant(&module, "MAX_RANK") as usize, MAX_RANK);
        assert_eq!(constant(&module, "MODE_DML"), MODE_DML);
        assert_eq!(constant(&module, "MODE_ONNX"), MODE_ONNX);
    }
}

/// Modules of the two paths differ only in the scan variant; kinds only in `is_nz`.
#[test]
fn assembly_swaps_one_part() {
    let spec = |module, path| {
        ShaderSpec {
            module,
            path,
            workgroup_size: 64,
        }
        .source()
    };
    let word = ModuleKind::Count(ElementKind::Word);
    let sub = spec(word, ScanPath::Subgroup);
    let wg = spec(word, ScanPath::Workgroup);
    assert!(sub.contains("subgroupExclusiveAdd") && !wg.contains("subgroupExclusiveAdd"));
    assert!(sub.contains(ElementKind::Word.is_nz_wgsl()));
    let byte = spec(ModuleKind::Count(ElementKind::Byte), ScanPath::Subgroup);
    assert!(byte.contains(ElementKind::Byte.is_nz_wgsl()));
    assert!(!byte.contains(ElementKind::Word.is_nz_wgsl()));
    assert!(!spec(ModuleKind::Scan, ScanPath::Workgroup).contains("fn is_nz"));
}

/// The WGSL bindings are the ones `binding` names, with the same access.
#[test]
fn bindings_agree_with_rust() {
    let spec = ShaderSpec {
        module: ModuleKind::Scatter(ElementKind::Half),
        path: ScanPath::Subgroup,
        workgroup_size: 32,
    };
    let module = parse(&spec);
    let names = [
        ("input", binding::INPUT),
        ("p", binding::PARAMS),
        ("tiles", binding::TILES),
        ("count", binding::COUNT),
        ("out", binding::OUT),
        ("blocks", binding::BLOCKS),
    ];
    let mut found = 0;
    for (_, var) in module.global_variables.iter() {
        let Some(res) = &var.binding else { continue };
        let name = var.name.as_deref().unwrap();
        let (_, b) = names
            .iter()
            .find(|(n, _)| *n == name)
            .unwrap_or_else(|| panic!("unexpected binding {name}"));
        assert_eq!((res.group, res.binding), (0, *b), "{name}");
        let (_, read_only) = binding::ALL.iter().find(|(i, _)| i == b).unwrap();
        let naga::AddressSpace::Storage { access } = var.space else {
            panic!("{name} is a storage buffer");
        };
        assert_eq!(
            !access.contains(naga::StorageAccess::STORE),
            *read_only,
            "{name} access"
        );
        found += 1;
    }
    assert_eq!(found, binding::ALL.len());
}
