//! Fixed sizes read from the inference.

use crate::infer::ShapeTable;

/// The fixed shape of `name`, when every size is known.
pub fn static_dims(shapes: &ShapeTable, name: &str) -> Option<Vec<i64>> {
    shapes
        .info(name)?
        .dims
        .as_ref()?
        .iter()
        .map(|d| d.as_static())
        .collect()
}
