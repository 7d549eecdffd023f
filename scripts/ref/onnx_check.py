#!/usr/bin/env python3
"""Runs an ONNX model written by `koma export --format onnx` in onnxruntime.

  onnx_check.py MODEL PLANES OUT_DIR

PLANES holds encoded positions as raw little-endian f32 ([batch, planes, rows, cols],
row-major; the batch follows from the file's size and the model's input shape). The
model runs on the CPU in two calls of different sizes (the first position alone, then
the rest), which exercises the symbolic batch dimension, and writes to OUT_DIR:

  policy_logits.f32   [batch, policy_len] raw little-endian f32
  wdl.f32             [batch, 3]

On stdout one JSON object: onnxruntime's version, the model's input and output names,
shapes and types as onnxruntime reports them, its producer and graph name, and its
metadata_props.
model/tests/onnx_export.rs runs this against koma's own evaluator.

Usage (repository root): .venv/bin/python scripts/ref/onnx_check.py model.onnx planes.f32 out/
"""
import json
import os
import sys

import numpy as np
import onnxruntime as ort


def main(model_path, planes_path, out_dir):
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(model_path, options, providers=["CPUExecutionProvider"])
    (inp,) = session.get_inputs()
    _, planes, rows, cols = inp.shape
    x = np.fromfile(planes_path, dtype="<f4").reshape(-1, planes, rows, cols)
    names = [o.name for o in session.get_outputs()]
    parts = [session.run(names, {inp.name: x[:1]}), session.run(names, {inp.name: x[1:]})]
    for i, name in enumerate(names):
        out = np.concatenate([p[i] for p in parts]).astype("<f4")
        out.tofile(os.path.join(out_dir, name + ".f32"))
    meta = session.get_modelmeta()
    describe = lambda v: {"name": v.name, "shape": v.shape, "type": v.type}
    print(json.dumps({
        "onnxruntime": ort.__version__,
        "batch": int(x.shape[0]),
        "inputs": [describe(v) for v in session.get_inputs()],
        "outputs": [describe(v) for v in session.get_outputs()],
        "producer": meta.producer_name,
        "graph": meta.graph_name,
        "metadata": meta.custom_metadata_map,
    }))


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
