"""``autograder sandbox setup`` (root, once per boot) and ``autograder sandbox check``."""

from __future__ import annotations

import argparse
import sys

from ..model import SandboxSettings
from ..sandbox import delegation, enforcement, self_test


def run(args: argparse.Namespace) -> int:
    if args.sandbox_command == "setup":
        try:
            lines = delegation.setup(args.user)
        except (delegation.DelegationError, OSError) as exc:
            print(f"autograder: 无法准备 cgroup：{exc}", file=sys.stderr)
            return 2
        for line in lines:
            print(line)
        return 0
    try:
        held = enforcement.prepare(args.cgroup_parent, args.sandbox_user)
    except enforcement.SetupError as exc:
        print(f"autograder: {exc}", file=sys.stderr)
        return 2
    print(held.describe())
    why = self_test(settings=SandboxSettings(True, args.cgroup_parent, args.sandbox_user))
    print(f"沙箱自检：{why or '通过'}")
    return 2 if why else (1 if held.weak() else 0)
