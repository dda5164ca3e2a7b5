"""A grading process looks up where its sandboxes' cgroups go at most every ``BASES_TTL`` seconds, but at once
for another parent (``cgroup._bases``): the parent a job's settings name is the one used."""

from __future__ import annotations

import os
import uuid

import pytest

from autograder.sandbox import delegation
from autograder.sandbox.cgroup import SandboxCgroups

if os.geteuid() != 0 or not delegation.parents("/"):
    pytest.skip("needs root and a cgroup hierarchy", allow_module_level=True)


def test_sandbox_cgroups_follow_a_change_of_the_parent_at_once():
    before = SandboxCgroups(processes=8, cpus=1, memory_bytes=1 << 28)
    parent = f"/ag-parent-test-{uuid.uuid4().hex[:8]}"
    made = []
    try:
        assert before.paths and all(p.parent == base for p, base in
                                    ((before.paths[c], delegation.parents("/")[c]) for c in before.paths))
        roots = [delegation.CGROUP_ROOT] if delegation.is_v2() else [delegation.CGROUP_ROOT / c for c in
                                                                      delegation.V1_CONTROLLERS]
        for root in roots:
            if (root / "cgroup.procs").exists():
                (root / parent.lstrip("/")).mkdir()
                made.append(root / parent.lstrip("/"))
        delegation.prepare(parent)  # as the grading command does with --cgroup-parent
        after = SandboxCgroups(processes=8, cpus=1, memory_bytes=1 << 28, parent=parent)
        try:
            assert after.paths and all(p.parent.name == parent.lstrip("/") for p in after.paths.values())
        finally:
            after.remove()
    finally:
        before.remove()
        for path in made:
            path.rmdir()
