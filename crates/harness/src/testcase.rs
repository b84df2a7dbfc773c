//! ONNX test-case directories, in the layout of ONNX's backend tests:
//!
//! ```text
//! <dir>/model.onnx
//! <dir>/test_data_set_0/input_0.pb ... input_N.pb    (TensorProto, name = graph input name)
//! <dir>/test_data_set_0/output_0.pb ... output_M.pb  (TensorProto, name = graph output name)
//! ```

use crate::Tensor;
use anyhow::{bail, Context, Result};
use nonzero_proto::onnx::ModelProto;
use prost::Message;
use std::fs;
use std::path::{Path, PathBuf};

/// One `test_data_set_N`: named inputs and expected outputs, in graph order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DataSet {
    pub inputs: Vec<(String, Tensor)>,
    pub outputs: Vec<(String, Tensor)>,
}

/// A model and its data sets.
#[derive(Debug, Clone, PartialEq)]
pub struct TestCase {
    pub model: ModelProto,
    pub data_sets: Vec<DataSet>,
}

/// Names of the graph's inputs that are not initializers, and of its outputs.
pub fn io_names(model: &ModelProto) -> (Vec<String>, Vec<String>) {
    let Some(g) = model.graph.as_ref() else {
        return (vec![], vec![]);
    };
    let inits: Vec<&str> = g.initializer.iter().map(|t| t.name()).collect();
    let inputs = g
        .input
        .iter()
        .map(|v| v.name().to_string())
        .filter(|n| !inits.contains(&n.as_str()))
        .collect();
    let outputs = g.output.iter().map(|v| v.name().to_string()).collect();
    (inputs, outputs)
}

/// Reads a serialized `ModelProto`.
pub fn read_model(path: &Path) -> Result<ModelProto> {
    let bytes = fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    ModelProto::decode(bytes.as_slice())
        .with_context(|| format!("{} is not an ONNX model", path.display()))
}

/// Writes a serialized `ModelProto`.
pub fn write_model(path: &Path, model: &ModelProto) -> Result<()> {
    fs::write(path, model.encode_to_vec()).with_context(|| format!("writing {}", path.display()))
}

impl TestCase {
    /// A case with a single data set.
    pub fn new(
        model: ModelProto,
        inputs: Vec<(String, Tensor)>,
        outputs: Vec<(String, Tensor)>,
    ) -> TestCase {
        TestCase {
            model,
            data_sets: vec![DataSet { inputs, outputs }],
        }
    }

    /// A case whose inputs and outputs are named, in order, after the graph's inputs and outputs.
    pub fn with_graph_names(
        model: ModelProto,
        inputs: Vec<Tensor>,
        outputs: Vec<Tensor>,
    ) -> TestCase {
        let (in_names, out_names) = io_names(&model);
        assert_eq!(in_names.len(), inputs.len(), "one tensor per graph input");
        assert_eq!(
            out_names.len(),
            outputs.len(),
            "one tensor per graph output"
        );
        let inputs = in_names.into_iter().zip(inputs).collect();
        let outputs = out_names.into_iter().zip(outputs).collect();
        TestCase::new(model, inputs, outputs)
    }

    /// Writes `dir/model.onnx` and `dir/test_data_set_N/{input,output}_M.pb` (creating `dir`).
    pub fn write(&self, dir: &Path) -> Result<()> {
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        write_model(&dir.join("model.onnx"), &self.model)?;
        for (n, set) in self.data_sets.iter().enumerate() {
            let sd = dir.join(format!("test_data_set_{n}"));
            fs::create_dir_all(&sd)?;
            for (i, (name, t)) in set.inputs.iter().enumerate() {
                fs::write(sd.join(format!("input_{i}.pb")), t.encode(name))?;
            }
            for (i, (name, t)) in set.outputs.iter().enumerate() {
                fs::write(sd.join(format!("output_{i}.pb")), t.encode(name))?;
            }
        }
        Ok(())
    }

    /// Reads a case directory: `model.onnx` and every `test_data_set_*` (sorted by number).
    /// Tensors without a name get the graph's input/output name at their position.
    pub fn read(dir: &Path) -> Result<TestCase> {
        let model = read_model(&dir.join("model.onnx"))?;
        let (in_names, out_names) = io_names(&model);
        let mut sets: Vec<(usize, PathBuf)> = vec![];
        for entry in fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().to_string();
            if let Some(n) = name
                .strip_prefix("test_data_set_")
                .and_then(|n| n.parse().ok())
            {
                sets.push((n, entry.path()));
            }
        }
        sets.sort();
        let mut data_sets = vec![];
        for (_, sd) in sets {
            let read_all = |prefix: &str, names: &[String]| -> Result<Vec<(String, Tensor)>> {
                let mut out = vec![];
                for i in 0.. {
                    let p = sd.join(format!("{prefix}_{i}.pb"));
                    if !p.exists() {
                        break;
                    }
                    let bytes = fs::read(&p)?;
                    let (mut name, t) = Tensor::decode(&bytes)
                        .with_context(|| format!("decoding {}", p.display()))?;
                    if name.is_empty() {
                        match names.get(i) {
                            Some(n) => name = n.clone(),
                            None => bail!(
                                "{} has no name and the graph has no {prefix} {i}",
                                p.display()
                            ),
                        }
                    }
                    out.push((name, t));
                }
                Ok(out)
            };
            data_sets.push(DataSet {
                inputs: read_all("input", &in_names)?,
                outputs: read_all("output", &out_names)?,
            });
        }
        Ok(TestCase { model, data_sets })
    }
}
