"""The property-test generator's graphs on QNN HTP (issue 38, item 5; fuzz_qnn.py says how each
is judged): NONZERO_DEPLOY_FUZZ_EXAMPLES chains (20 in CI, 200 under deploy_all) that `--static
--target qnn` makes fully static and whose inputs HTP takes, drawn from NONZERO_DEPLOY_FUZZ_SEED
(a fresh seed each run unless set; printed, and in the report, to replay a failure). Every one
must be equal on HTP with every node on QNN, or meet one of fuzz_qnn.KNOWN's toolchain faults,
which are counted and printed; any other fault fails."""

import collections
import os
import random

from hypothesis import HealthCheck, assume, given, seed, settings
from hypothesis import strategies as st

import fuzz_qnn
import models
from chain_strategies import STRATEGIES  # tests/python, on the path through fuzz_qnn

EXAMPLES = int(os.environ.get("NONZERO_DEPLOY_FUZZ_EXAMPLES", "200" if models.ALL else "20"))
SEED = int(os.environ.get("NONZERO_DEPLOY_FUZZ_SEED") or random.SystemRandom().randrange(2**32))


def test_generated_chains_on_qnn_htp(rows):
    print(f"\nNONZERO_DEPLOY_FUZZ_SEED={SEED} ({EXAMPLES} chains)")
    (models.BUILD / "fuzz").mkdir(parents=True, exist_ok=True)
    tally, faults = collections.Counter(), []

    @seed(SEED)
    @settings(max_examples=EXAMPLES, database=None, deadline=None, derandomize=False, print_blob=False,
              suppress_health_check=list(HealthCheck))
    @given(chain=st.sampled_from(sorted(STRATEGIES)).flatmap(lambda kind: STRATEGIES[kind]()))
    def check(chain):
        assume(fuzz_qnn.takes(chain))
        try:
            why = fuzz_qnn.judged(chain)
        except Exception as e:  # noqa: BLE001 (ONNX Runtime's and the comparisons' failures)
            known = fuzz_qnn.known(str(e))
            if known is None:
                faults.append(f"{chain.kind}: {str(e)[:300]}\n{chain.text()[:3000]}")
                raise
            tally[f"known fault: {known}"] += 1
            return
        assume(why != "not static")  # drawn again: the examples are static chains
        tally[why or "equal"] += 1

    try:
        check()
    finally:
        rows["fuzz"]["seed"] = SEED
        rows["fuzz"]["tally"] = dict(tally)
        print(f"NONZERO_DEPLOY_FUZZ_SEED={SEED}: {dict(tally)}")
    assert not faults, faults[0]
    assert sum(tally.values()) >= EXAMPLES, tally
