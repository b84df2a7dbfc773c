//! NonZero on any GPU through wgpu
