//! A model's inputs from an `.npz` file (`np.savez(path, input_ids=..., attention_mask=...)`),
//! for models whose inputs follow rules no graph shows (BART's one end-of-sentence token per row).
//!
//! `np.savez` writes a zip of stored (uncompressed) `.npy` members, one per keyword, named after
//! it; numpy marks every member zip64. This reads that layout and nothing more: compressed
//! members (`np.savez_compressed`), Fortran-order and big-endian arrays are refused by name.

use anyhow::{anyhow, bail, ensure, Context, Result};
use nonzero_core::DataType;
use nonzero_harness::{Tensor, TensorData};
use std::path::Path;

/// Every array of the file, by name (the member's name without `.npy`), in the file's order.
pub fn read_npz(path: &Path) -> Result<Vec<(String, Tensor)>> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    members(&bytes)
        .and_then(|members| {
            members
                .into_iter()
                .map(|(name, data)| {
                    let array = name.strip_suffix(".npy").unwrap_or(&name).to_string();
                    let tensor = read_npy(data).with_context(|| format!("array '{array}'"))?;
                    Ok((array, tensor))
                })
                .collect()
        })
        .with_context(|| format!("{} (an .npz as np.savez writes it)", path.display()))
}

fn u16_at(b: &[u8], at: usize) -> Result<u16> {
    let s = b.get(at..at + 2).ok_or_else(|| anyhow!("truncated zip"))?;
    Ok(u16::from_le_bytes([s[0], s[1]]))
}

fn u32_at(b: &[u8], at: usize) -> Result<u32> {
    let s = b.get(at..at + 4).ok_or_else(|| anyhow!("truncated zip"))?;
    Ok(u32::from_le_bytes(s.try_into().expect("4 bytes")))
}

fn u64_at(b: &[u8], at: usize) -> Result<u64> {
    let s = b.get(at..at + 8).ok_or_else(|| anyhow!("truncated zip"))?;
    Ok(u64::from_le_bytes(s.try_into().expect("8 bytes")))
}

fn offset(v: u64) -> Result<usize> {
    usize::try_from(v).map_err(|_| anyhow!("zip offset {v} past this machine's address space"))
}

/// The zip's members, (name, stored bytes), from its central directory.
fn members(b: &[u8]) -> Result<Vec<(String, &[u8])>> {
    // The end-of-central-directory record: the last signature within the comment's reach.
    let tail = b.len().saturating_sub(22 + 65535);
    let eocd = (tail..b.len().saturating_sub(21))
        .rev()
        .find(|&i| b[i..i + 4] == [0x50, 0x4b, 0x05, 0x06])
        .ok_or_else(|| anyhow!("not a zip file (no end-of-central-directory record)"))?;
    let mut count = u64::from(u16_at(b, eocd + 10)?);
    let mut dir = u64::from(u32_at(b, eocd + 16)?);
    if count == 0xffff || dir == 0xffff_ffff {
        // zip64: the locator just before the record points at the zip64 record.
        ensure!(
            eocd >= 20 && u32_at(b, eocd - 20)? == 0x0706_4b50,
            "zip64 locator missing"
        );
        let rec = offset(u64_at(b, eocd - 12)?)?;
        ensure!(u32_at(b, rec)? == 0x0606_4b50, "zip64 end record missing");
        count = u64_at(b, rec + 32)?;
        dir = u64_at(b, rec + 48)?;
    }
    let mut at = offset(dir)?;
    let mut out = vec![];
    for _ in 0..count {
        ensure!(u32_at(b, at)? == 0x0201_4b50, "bad central directory entry");
        let method = u16_at(b, at + 10)?;
        let mut size = u64::from(u32_at(b, at + 20)?);
        let name_len = usize::from(u16_at(b, at + 28)?);
        let extra_len = usize::from(u16_at(b, at + 30)?);
        let comment_len = usize::from(u16_at(b, at + 32)?);
        let mut local = u64::from(u32_at(b, at + 42)?);
        let name = b
            .get(at + 46..at + 46 + name_len)
            .ok_or_else(|| anyhow!("truncated zip"))?;
        let name = String::from_utf8_lossy(name).into_owned();
        let uncompressed = u64::from(u32_at(b, at + 24)?);
        let extra = b
            .get(at + 46 + name_len..at + 46 + name_len + extra_len)
            .ok_or_else(|| anyhow!("truncated zip"))?;
        zip64_fields(extra, uncompressed, &mut size, &mut local)?;
        ensure!(
            method == 0,
            "member {name} is compressed (np.savez_compressed?): save the inputs with np.savez"
        );
        let local = offset(local)?;
        ensure!(
            u32_at(b, local)? == 0x0403_4b50,
            "bad local header of {name}"
        );
        let start =
            local + 30 + usize::from(u16_at(b, local + 26)?) + usize::from(u16_at(b, local + 28)?);
        let data = b
            .get(start..start + offset(size)?)
            .ok_or_else(|| anyhow!("member {name} runs past the end of the file"))?;
        out.push((name, data));
        at += 46 + name_len + extra_len + comment_len;
    }
    Ok(out)
}

/// Reads the zip64 extra field (id 1): the 64-bit sizes and offset, present for each 32-bit field
/// that holds 0xffffffff, in the order uncompressed size, compressed size, local header offset.
fn zip64_fields(extra: &[u8], uncompressed: u64, size: &mut u64, local: &mut u64) -> Result<()> {
    let mut i = 0;
    while i + 4 <= extra.len() {
        let (id, len) = (u16_at(extra, i)?, usize::from(u16_at(extra, i + 2)?));
        if id == 1 {
            let mut at = i + 4;
            for (field, present) in [
                (None, uncompressed == 0xffff_ffff),
                (Some(0), *size == 0xffff_ffff),
                (Some(1), *local == 0xffff_ffff),
            ] {
                if present {
                    let v = u64_at(extra, at)?;
                    at += 8;
                    match field {
                        Some(0) => *size = v,
                        Some(_) => *local = v,
                        None => {}
                    }
                }
            }
        }
        i += 4 + len;
    }
    Ok(())
}

/// One `.npy` array: format 1.0 to 3.0, C order, little-endian (or one-byte) elements.
fn read_npy(b: &[u8]) -> Result<Tensor> {
    ensure!(
        b.starts_with(b"\x93NUMPY") && b.len() >= 10,
        "not an .npy array"
    );
    let (len, start) = match b[6] {
        1 => (usize::from(u16_at(b, 8)?), 10),
        2 | 3 => (offset(u64::from(u32_at(b, 8)?))?, 12),
        v => bail!(".npy format version {v} is not known"),
    };
    let header = b
        .get(start..start + len)
        .ok_or_else(|| anyhow!("truncated .npy header"))?;
    let header = std::str::from_utf8(header).context(".npy header is not text")?;
    let field = |key: &str| -> Result<&str> {
        let at = header
            .find(&format!("'{key}':"))
            .ok_or_else(|| anyhow!("no '{key}' in {header}"))?;
        Ok(header[at + key.len() + 3..].trim_start())
    };
    ensure!(
        field("fortran_order")?.starts_with("False"),
        "Fortran-order array: save np.ascontiguousarray(a)"
    );
    let descr = field("descr")?;
    let descr = descr
        .strip_prefix('\'')
        .and_then(|d| d.split('\'').next())
        .ok_or_else(|| anyhow!("bad descr in {header}"))?;
    let dtype = match descr.trim_start_matches(['<', '|', '=']) {
        "b1" => DataType::Bool,
        "u1" => DataType::Uint8,
        "i1" => DataType::Int8,
        "u2" => DataType::Uint16,
        "i2" => DataType::Int16,
        "u4" => DataType::Uint32,
        "i4" => DataType::Int32,
        "u8" => DataType::Uint64,
        "i8" => DataType::Int64,
        "f2" => DataType::Float16,
        "f4" => DataType::Float32,
        "f8" => DataType::Float64,
        "c8" => DataType::Complex64,
        "c16" => DataType::Complex128,
        _ => bail!("element type '{descr}' is not supported (little-endian numbers and bool are)"),
    };
    let shape = field("shape")?;
    let shape = shape
        .strip_prefix('(')
        .and_then(|s| s.split(')').next())
        .ok_or_else(|| anyhow!("bad shape in {header}"))?;
    let shape: Vec<usize> = shape
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| d.parse().map_err(|_| anyhow!("bad shape in {header}")))
        .collect::<Result<_>>()?;
    let raw = &b[start + len..];
    let want = shape.iter().product::<usize>() * dtype.size_of().expect("numbers have a size");
    ensure!(
        raw.len() == want,
        "{} bytes of data where shape {shape:?} of {descr} needs {want}",
        raw.len()
    );
    let data = if dtype == DataType::Bool {
        TensorData::Bool(raw.iter().map(|&v| v != 0).collect())
    } else {
        TensorData::from_le_bytes(dtype, raw)?
    };
    Ok(Tensor::new(shape, data))
}
