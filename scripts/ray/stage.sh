# Sourced by scripts/test: the `ray` stage. Ray Data and Ray Serve on real local clusters of two
# one-CPU nodes, and of three for the lost node (scripts/ray/cluster.py), in .venv-ray (requirements/ray.txt, Ray pinned) with
# the nonzero-ort wheel of this checkout. Ray's files go under a fresh /tmp/nz-ray-* directory,
# removed at the end; every node and the Serve proxy listen on 127.0.0.1.
stage_ray() {
  . scripts/env.sh
  . scripts/ray/venv.sh
  step "Ray: .venv-ray (requirements/ray.txt) with the nonzero-ort wheel (maturin, build/ray/wheels)"
  ray_venv
  export RAY_USAGE_STATS_ENABLED=0
  rm -f build/ray/report.txt
  step "Ray: scripts/run-models --ray 2 (bundled models, 64 seeded rows each, 2 one-CPU nodes)"
  .venv-ray/bin/python scripts/ray/run_models.py --ray 2 --wheel "$NONZERO_RAY_WHEEL"
  step "Ray: tests/ray (a worker killed mid-job, Serve under load, a replica killed, bad requests;" \
    "a worker node lost mid-job and under Serve's load, on 3 nodes)"
  .venv-ray/bin/python -m pytest -q -s tests/ray
  echo "measured (build/ray/report.txt):"
  cat build/ray/report.txt
}
