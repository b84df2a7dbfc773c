"""Ray Serve: a deployment that serves an ONNX model, with the library registered in each replica,
over HTTP. Bodies: ``nonzero_ort.ray.codec`` (npz or JSON, named arrays in and out).

    from ray import serve
    import nonzero_ort.ray as nzr
    serve.start(proxy_location="HeadOnly", http_options={"host": "127.0.0.1", "port": 8000})
    serve.run(nzr.serve_app("model.onnx", num_replicas=2), name="nonzero", route_prefix="/nonzero")

- ``POST <route>``: the inputs; the reply holds every output, in the request's format. A bad
  request gets a 4xx with ``{"error": message}`` (400 a rule broken, 405 another method, 413
  larger than ``max_body_bytes``, 415 another Content-Type), and the replica goes on serving.
  An error inside ONNX Runtime is a 400 when it says the arguments were invalid, else a 500.
- ``GET <route>``: the model's inputs and outputs (name, dtype, shape) and the limits, as JSON.
"""

import asyncio

from ray import serve
from starlette.responses import JSONResponse, Response

from . import codec
from .session import check_feed, input_specs, make_session

#: The largest request body a replica reads, unless ``max_body_bytes`` says otherwise.
DEFAULT_MAX_BODY_BYTES = 16 << 20


@serve.deployment
class ModelServer:
    """One replica: one session of ``model`` (a path every node can read, or the model's bytes).
    ``max_body_bytes`` bounds the body and the decoded arrays; other keywords (``intra_op_threads``,
    ``providers``, ``device``, ``onnx_domain``, ``session_options``, ``session_config``) are
    ``nonzero_ort.ray.make_session``'s."""

    def __init__(self, model, *, max_body_bytes=DEFAULT_MAX_BODY_BYTES, **session_kwargs):
        if not isinstance(max_body_bytes, int) or max_body_bytes <= 0:
            raise ValueError(f"ModelServer: max_body_bytes must be an int > 0, got {max_body_bytes!r}")
        self.session = make_session(model, **session_kwargs)
        self.specs = input_specs(self.session)
        self.output_names = [o.name for o in self.session.get_outputs()]
        self.max_body_bytes = max_body_bytes

    def describe(self):
        def show(args):
            return [{"name": a.name, "type": a.type, "shape": [d if isinstance(d, int) else None for d in a.shape or []]}
                    for a in args]

        return {"inputs": show(self.session.get_inputs()), "outputs": show(self.session.get_outputs()),
                "max_body_bytes": self.max_body_bytes, "content_types": list(codec.CONTENT_TYPES)}

    async def __call__(self, request):
        if request.method == "GET":
            return JSONResponse(self.describe())
        if request.method != "POST":
            return _error(405, f"method {request.method} is not served: POST the inputs, or GET the model's description")
        try:
            body = await _read_body(request, self.max_body_bytes)
            arrays, fmt = codec.decode_request(body, request.headers.get("content-type"), self.max_body_bytes)
            feeds = self._feeds(arrays)
        except codec.BadRequest as e:
            return _error(e.status, str(e))
        try:
            outputs = await asyncio.to_thread(self.session.run, self.output_names, feeds)
        except Exception as e:  # ONNX Runtime's errors: pybind11 classes named by status
            status = 400 if type(e).__name__ in ("InvalidArgument", "InvalidGraph") else 500
            return _error(status, f"ONNX Runtime: {type(e).__name__}: {e}")
        body, content_type = codec.encode_response(dict(zip(self.output_names, outputs)), fmt)
        return Response(body, media_type=content_type)

    def _feeds(self, arrays):
        missing = [n for n in self.specs if n not in arrays]
        if missing:
            raise codec.BadRequest(400, f"missing input {missing[0]!r}; the model takes {list(self.specs)}")
        unknown = [n for n in arrays if n not in self.specs]
        if unknown:
            raise codec.BadRequest(400, f"unknown input {unknown[0]!r}; the model takes {list(self.specs)}")
        try:
            return {n: check_feed(n, arrays[n], self.specs[n]) for n in self.specs}
        except ValueError as e:
            raise codec.BadRequest(400, str(e)) from None


def serve_app(model, *, num_replicas=1, num_cpus=1, max_ongoing_requests=8, health_check_period_s=2.0,
              health_check_timeout_s=10.0, **server_kwargs):
    """The application to pass to ``serve.run``: ``ModelServer`` with ``num_replicas`` replicas of
    ``num_cpus`` CPUs each, at most ``max_ongoing_requests`` requests in a replica at once (more
    wait in the proxy), and health checks every ``health_check_period_s`` (a replica that fails
    one, or dies, is replaced by Serve's controller). Other keywords go to ``ModelServer``."""
    return ModelServer.options(
        num_replicas=num_replicas,
        ray_actor_options={"num_cpus": num_cpus},
        max_ongoing_requests=max_ongoing_requests,
        health_check_period_s=health_check_period_s,
        health_check_timeout_s=health_check_timeout_s,
    ).bind(model, **server_kwargs)


async def _read_body(request, limit):
    length = request.headers.get("content-length")
    if length is not None:
        if not length.isdigit():
            raise codec.BadRequest(400, f"Content-Length {length!r} is not a number")
        if int(length) > limit:
            raise codec.BadRequest(413, f"the body has {length} bytes, more than the limit of {limit}")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise codec.BadRequest(413, f"the body has more than the limit of {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _error(status, message):
    return JSONResponse({"error": message}, status_code=status)
