"""nonzero_ort on Ray: batch inference with Ray Data and online serving with Ray Serve, the
library registered in every worker (``pip install "./python[ray]"`` from the checkout).

    import ray, nonzero_ort.ray as nzr
    ds = ray.data.from_items([{"id": i, "x": x} for i, x in enumerate(arrays)])
    out = nzr.map_model(ds, "model.onnx", concurrency=2)      # or ds.map_batches(nzr.OnnxPredictor, ...)

    from ray import serve
    serve.run(nzr.serve_app("model.onnx"), route_prefix="/nonzero")

- ``OnnxPredictor``: a callable class for ``Dataset.map_batches``; one ONNX Runtime session per
  worker, one ``session.run`` per row (NonZero's output size depends on the data, so rows are not
  stacked into one batch).
- ``serve_app`` / ``ModelServer``: a Ray Serve deployment, named arrays in and out over HTTP, as an
  npz or a JSON body (``nonzero_ort.ray.codec`` documents the formats and has the client side).

Every entry point takes the library options of ``nonzero_ort.register`` (``device``,
``onnx_domain``). Importing this package does not import Ray; ``serve_app`` and ``ModelServer``
import Ray Serve when first used. See docs/deployment.md, "Scale out".
"""

from .codec import BadRequest, decode_request, decode_response, encode_request, encode_response
from .data import OnnxPredictor, map_model
from .session import make_session

__all__ = [
    "BadRequest", "ModelServer", "OnnxPredictor", "decode_request", "decode_response", "encode_request",
    "encode_response", "make_session", "map_model", "serve_app",
]


def __getattr__(name):
    # Ray Serve (and with it starlette) is imported only by the serving half.
    if name in ("ModelServer", "serve_app"):
        from . import serve

        return getattr(serve, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
