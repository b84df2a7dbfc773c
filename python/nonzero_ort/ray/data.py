"""Ray Data: a callable class for ``Dataset.map_batches`` that runs an ONNX model with the library
registered, one session per worker process."""

import os

import numpy as np

from .session import PROVIDERS, check_feed, input_specs, make_session


class OnnxPredictor:
    """Runs ``model`` on every row of a batch. Use it as ``ds.map_batches(OnnxPredictor,
    fn_constructor_kwargs={"model": ...}, concurrency=N)``, or through ``map_model``.

    - ``model``: a path every node can read, or the model's bytes (shipped to each worker).
    - ``input_columns``: which column feeds which model input: a dict ``{input: column}``, a list
      of columns in the model's input order, or None (columns named as the inputs).
    - ``output_columns``: the same for the outputs (None: named as the outputs).
    - ``keep_columns``: columns copied through unchanged (None: every column that is not an input).
    - ``worker_column``: if set, a column of that name gets the process id of the worker that ran
      each row.
    - ``intra_op_threads``, ``providers``, ``device``, ``onnx_domain``, ``session_options``,
      ``session_config``, ``library``: as ``nonzero_ort.ray.make_session``.

    Each row is one ``session.run``: NonZero's output size depends on the data, so rows are not
    stacked. A cell must have the input's dtype exactly (no silent casts). An output column holds
    one array per row (Ray stores arrays of different shapes as a variable-shaped tensor column).
    """

    def __init__(self, model, *, input_columns=None, output_columns=None, keep_columns=None,
                 worker_column=None, intra_op_threads=1, providers=PROVIDERS, device="cpu", onnx_domain=True,
                 session_options=None, session_config=None, library=True):
        self.session = make_session(
            model, intra_op_threads=intra_op_threads, providers=providers, device=device,
            onnx_domain=onnx_domain, session_options=session_options, session_config=session_config,
            library=library,
        )
        self.specs = input_specs(self.session)
        self.inputs = _mapping("input_columns", input_columns, list(self.specs))
        self.outputs = _mapping("output_columns", output_columns, [o.name for o in self.session.get_outputs()])
        self.keep_columns = None if keep_columns is None else list(keep_columns)
        self.worker_column = worker_column
        self.pid = os.getpid()

    def __call__(self, batch):
        """``batch``: ``{column: array of rows}`` (Ray Data's numpy batch format)."""
        missing = [c for c in self.inputs.values() if c not in batch]
        if missing:
            raise KeyError(f"OnnxPredictor: the batch has no column {missing} (columns: {sorted(batch)})")
        rows = len(next(iter(batch.values()))) if batch else 0
        output_names = list(self.outputs)
        results = {name: np.empty(rows, dtype=object) for name in output_names}
        for i in range(rows):
            feeds = {}
            for name, column in self.inputs.items():
                try:
                    feeds[name] = check_feed(name, batch[column][i], self.specs[name])
                except ValueError as e:
                    raise ValueError(f"OnnxPredictor: row {i} of the batch, column {column!r}: {e}") from None
            for name, value in zip(output_names, self.session.run(output_names, feeds)):
                results[name][i] = value
        keep = self.keep_columns
        if keep is None:
            inputs = set(self.inputs.values())
            keep = [c for c in batch if c not in inputs]
        out = {c: batch[c] for c in keep}
        for name, column in self.outputs.items():
            out[column] = results[name]
        if self.worker_column is not None:
            out[self.worker_column] = np.full(rows, self.pid, dtype=np.int64)
        return out


def _mapping(what, columns, names):
    """{model name: column} from None, a list in the model's order, or a dict."""
    if columns is None:
        return {n: n for n in names}
    if isinstance(columns, dict):
        unknown = [n for n in columns if n not in names]
        if unknown:
            raise ValueError(f"OnnxPredictor: {what} names {unknown}, which the model lacks (it has {names})")
        if what == "input_columns" and set(columns) != set(names):
            raise ValueError(f"OnnxPredictor: {what} must map every model input {names}, got {sorted(columns)}")
        return {n: str(columns[n]) for n in names if n in columns}
    columns = list(columns)
    if len(columns) != len(names):
        raise ValueError(f"OnnxPredictor: {what} has {len(columns)} names, the model has {len(names)} ({names})")
    return dict(zip(names, map(str, columns)))


#: map_model's ``max_task_retries``. A batch sent to a worker whose node is lost is tried again,
#: with a growing delay (0.1 s doubling up to 5 s, Ray 2.60), until the GCS declares the node dead
#: and Ray restarts the worker elsewhere, and each try counts. With Ray's default node health
#: checks that took 14 s and 7 tries here, and 3 failed the job (docs/deployment.md, "Scale out").
#: 20 last over 80 s, past the 55 s the default checks take when a dead node's checks time out.
MAX_TASK_RETRIES = 20


def map_model(ds, model, *, concurrency=1, batch_size=16, num_cpus=1, max_restarts=3,
              max_task_retries=MAX_TASK_RETRIES, **predictor_kwargs):
    """``ds.map_batches(OnnxPredictor, ...)`` with this package's defaults made explicit: a pool of
    ``concurrency`` workers (actors) of ``num_cpus`` CPUs each, ``batch_size`` rows a call, and a worker that dies is
    restarted up to ``max_restarts`` times with its batches retried up to ``max_task_retries`` times
    (Ray Data's own default is to retry forever; 20 lets a batch outlast the loss of its node,
    see ``MAX_TASK_RETRIES``). Other keywords go to ``OnnxPredictor``."""
    if isinstance(model, os.PathLike):
        model = os.fspath(model)
    if isinstance(model, str) and not os.path.isfile(model):
        raise FileNotFoundError(f"nonzero_ort.ray.map_model: no model file {model!r}")
    import warnings

    import ray.data

    with warnings.catch_warnings():
        # Ray 2.60 deprecates actor options as keywords (for 2.64) and has no other way to set them
        # yet; its map_batches docs still show map_batches(..., max_restarts=0).
        warnings.filterwarnings("ignore", message="`ray_remote_args` is deprecated")
        return ds.map_batches(
            OnnxPredictor,
            fn_constructor_kwargs={"model": model, **predictor_kwargs},
            batch_size=batch_size,
            batch_format="numpy",
            compute=ray.data.ActorPoolStrategy(size=concurrency),
            num_cpus=num_cpus,
            max_restarts=max_restarts,
            max_task_retries=max_task_retries,
        )
