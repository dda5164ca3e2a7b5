"""Where sandbox cgroups go and how the limits in force are named (no sandbox is started here)."""

from __future__ import annotations

import os

import pytest

from autograder.sandbox import account, delegation
from autograder.sandbox.enforcement import Enforcement


@pytest.mark.parametrize("path", ["relative/path", "/a/../b", "/a/./b"])
def test_a_cgroup_parent_must_be_an_absolute_path_without_dots(path):
    with pytest.raises(delegation.DelegationError, match="以 / 开头"):
        delegation.parents(path)


def test_an_unusable_explicit_parent_is_refused_with_its_path():
    with pytest.raises(delegation.DelegationError, match="/no-such-parent-for-autograder"):
        delegation.prepare("/no-such-parent-for-autograder")


def test_own_cgroup_reads_proc_self_cgroup():
    text = open("/proc/self/cgroup").read()
    own = delegation.own_cgroup()
    assert own.startswith("/") and f"::{own}" in text


def test_the_sandbox_account_is_never_root(monkeypatch):
    if os.geteuid() != 0:
        assert account.sandbox_account("root") is None  # not root: sandboxes run as this user
        return
    with pytest.raises(account.AccountError, match="root"):
        account.sandbox_account("root")
    with pytest.raises(account.AccountError, match="没有用户"):
        account.sandbox_account("no-such-user-for-autograder")
    assert account.sandbox_account(None).name == "nobody"


def test_weak_limits_are_named():
    strong = Enforcement("cgroup", "per sandbox", "per sandbox")
    weak = Enforcement("wall clock", "per process", "per user")
    assert strong.weak() == []
    assert [w[:4] for w in weak.weak()] == ["CPU ", "内存上限", "进程数上"]
    assert "wall clock" in weak.describe() and "per process" in weak.describe() and "per user" in weak.describe()
    assert weak.to_json()["cpu_time"] == "wall clock"


def test_a_delegated_v2_cgroup_moves_the_grader_into_a_leaf_then_enables_the_controllers(tmp_path, monkeypatch):
    """cgroup v2's "no internal processes" rule, on a file tree shaped like one (a real v2 host is not available here):
    the grader's processes are written into ``grader/cgroup.procs`` before the controllers are enabled below."""
    root = tmp_path / "cgroup"
    service = root / "system.slice" / "course-submit.service"
    service.mkdir(parents=True)
    (root / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    (service / "cgroup.controllers").write_text("cpu memory pids\n")
    (service / "cgroup.subtree_control").write_text("")
    (service / "cgroup.procs").write_text("101\n102\n")
    order = []
    real_write = type(service).write_text

    def write_text(self, data, *args, **kwargs):
        order.append((self.relative_to(service).as_posix(), data))
        if self.name == "cgroup.procs" and not self.exists():
            self.touch()
        return real_write(self, data, *args, **kwargs)

    monkeypatch.setattr(type(service), "write_text", write_text)
    monkeypatch.setattr(delegation, "CGROUP_ROOT", root)
    found = delegation.prepare("/system.slice/course-submit.service")
    assert found == {"unified": service}
    assert order == [("grader/cgroup.procs", "101"), ("grader/cgroup.procs", "102"),
                     ("cgroup.subtree_control", "+pids +cpu +memory")]


@pytest.mark.parametrize("sysctls, words", [
    ({"kernel.apparmor_restrict_unprivileged_userns": "1"}, "AppArmor 不让普通用户的程序建立用户命名空间"),
    ({"kernel.unprivileged_userns_clone": "0"}, "kernel.unprivileged_userns_clone=0"),
    ({"user.max_user_namespaces": "0"}, "user.max_user_namespaces=0"),
    ({}, ""),
])
def test_the_self_test_names_what_restricts_user_namespaces(monkeypatch, sysctls, words):
    from autograder.sandbox import selftest

    monkeypatch.setattr(selftest, "_sysctl", sysctls.get)
    hint = selftest.userns_hint()
    assert (words in hint) if words else hint == ""
