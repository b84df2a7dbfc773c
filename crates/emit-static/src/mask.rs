//! The pieces every static form starts from: which elements NonZero selects, flattened, as
//! bool and as int64 0/1, their running count and their total.

use super::emit::Emitter;
use nonzero_proto::onnx::tensor_proto::DataType;

/// A mask's selection, flattened to `[numel]`.
pub struct Selection {
    /// bool `[numel]`: true where the mask element is not zero.
    pub selected: String,
    /// int64 `[numel]`: 1 where selected, else 0 (made when first asked for: the Where forms
    /// of masked writes need only `selected`).
    ones: Option<String>,
    /// Elements of the mask.
    pub numel: i64,
}

impl Selection {
    /// The selection of `mask` (element type `elem_type`, `numel` elements). NonZero's test is
    /// "not equal to zero" (NaN is selected, -0.0 is not): a bool mask is used as it is, the
    /// small and unsigned integers are cast to bool (the same test: ONNX Runtime 1.17.3 has no
    /// Equal kernel for them at opset 11), any other goes through `Not(Equal(mask, 0))`. `None`
    /// for strings.
    ///
    /// For LiteRT the mask is flattened first and tested after: onnx2tf 2.6.9's tf_converter
    /// flattens an elementwise op's result on a rank-3 input in its NWC order (argwhere of a
    /// `[6, 6, 6]` tensor came out in another order), while a Reshape of the input itself keeps
    /// ONNX's. Either order is exact: the test is elementwise.
    pub fn of(e: &mut Emitter, mask: &str, elem_type: i32, numel: i64) -> Option<Selection> {
        use DataType as T;
        let small_integer = matches!(
            T::try_from(elem_type),
            Ok(T::Int8 | T::Int16 | T::Uint8 | T::Uint16 | T::Uint32 | T::Uint64)
        );
        let flat_first = e.target == crate::Target::Litert;
        let mask = if flat_first {
            e.reshape(mask, &[numel])
        } else {
            mask.to_string()
        };
        let as_bool = if elem_type == T::Bool as i32 {
            mask
        } else if small_integer {
            e.cast(&mask, T::Bool)
        } else {
            let zero = e.zero(elem_type)?;
            let equal = e.binary("Equal", &mask, &zero);
            e.op("Not", &[&equal], vec![])
        };
        let selected = if flat_first {
            as_bool
        } else {
            e.reshape(&as_bool, &[numel])
        };
        Some(Selection {
            selected,
            ones: None,
            numel,
        })
    }

    /// int64 `[numel]`: 1 where selected, else 0.
    pub fn ones(&mut self, e: &mut Emitter) -> String {
        let selected = &self.selected;
        self.ones
            .get_or_insert_with(|| e.cast(selected, DataType::Int64))
            .clone()
    }

    /// int64 `[numel]`: how many elements are selected up to and including each one.
    pub fn running_count(&mut self, e: &mut Emitter) -> String {
        let ones = self.ones(e);
        e.cumsum(&ones)
    }

    /// The running count as `index_type` (int32 or int64): int32 halves the bytes the count
    /// and the gathers by it move, where every count fits.
    pub fn running_count_as(&mut self, e: &mut Emitter, index_type: DataType) -> String {
        if index_type == DataType::Int64 {
            return self.running_count(e);
        }
        let ones = e.cast(&self.selected, index_type);
        e.cumsum(&ones)
    }

    /// int64 scalar: how many are selected.
    pub fn count(&mut self, e: &mut Emitter) -> String {
        let ones = self.ones(e);
        e.sum_all(&ones)
    }

    /// int64 scalar: how many are selected, read off the running count's last element (one
    /// pass fewer than a sum) when there is one. RKNN gets the sum: rknn-toolkit2 2.5.0's
    /// converter fails on that Slice and Reshape to a scalar ("Got invalid dimensions").
    pub fn count_from(&mut self, e: &mut Emitter, running: &str, numel: i64) -> String {
        if numel == 0 || e.target == crate::Target::Rknn {
            return self.count(e);
        }
        let last = e.slice1(running, numel - 1, numel);
        let scalar = e.ints(&[]);
        e.op("Reshape", &[&last, &scalar], vec![])
    }
}
