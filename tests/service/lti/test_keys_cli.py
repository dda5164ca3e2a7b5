"""The tool's keys (0600, rotation keeps the old public key published while its tokens live) and ``autograder lti``."""

from __future__ import annotations

import json
import stat
import subprocess

import jwt
import pytest

from autograder.service.lti import keys

from ..server import AUTOGRADER


class Clock:
    def __init__(self, t: float) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def test_key_is_made_on_first_use_private_and_stable(tmp_path):
    store = keys.ToolKeys(tmp_path)
    first = store.current()
    (path,) = keys.key_dir(tmp_path).glob("*.pem")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert keys.ToolKeys(tmp_path).current().kid == first.kid  # the same key in the next process
    (jwk,) = store.jwks()["keys"]
    assert jwk["kid"] == first.kid and jwk["kty"] == "RSA" and "d" not in jwk  # public part only


def test_rotation_keeps_the_old_public_key_until_its_tokens_expired(tmp_path):
    clock = Clock(1_000_000.0)
    old = keys.ToolKeys(tmp_path, clock).current()
    token = jwt.encode({"iss": "tool", "exp": int(clock.t) + keys.TOKEN_LIFETIME}, old.private_pem, algorithm="RS256",
                       headers={"kid": old.kid})
    clock.t += 10
    new = keys.rotate(tmp_path, clock)
    store = keys.ToolKeys(tmp_path, clock)
    assert store.current().kid == new.kid
    published = jwt.PyJWKSet.from_dict(store.jwks())
    assert {k.key_id for k in published.keys} == {old.kid, new.kid}
    # a token the old key signed before the rotation still verifies with the published set
    assert jwt.decode(token, published[old.kid], algorithms=["RS256"], options={"verify_exp": False})["iss"] == "tool"
    clock.t += keys.KEEP_SECONDS + 1
    assert [k["kid"] for k in store.jwks()["keys"]] == [new.kid]
    keys.rotate(tmp_path, clock)  # the next rotation deletes the retired private key
    assert not list(keys.key_dir(tmp_path).glob(f"*-{old.kid}.pem"))


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([AUTOGRADER, "lti", *args], capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_cli_add_list_info_rotate_remove(tmp_path):
    data = str(tmp_path / "data")
    reg = ["--name", "学校 Moodle", "--issuer", "https://moodle.example.edu", "--client-id", "abc", "--deployment-id", "1",
           "--deployment-id", "2", "--auth-login-url", "https://moodle.example.edu/mod/lti/auth.php",
           "--auth-token-url", "https://moodle.example.edu/mod/lti/token.php", "--jwks-url", "https://moodle.example.edu/mod/lti/certs.php"]
    added = cli("add-platform", "--data", data, *reg)
    assert added.returncode == 0 and "已注册平台 1：学校 Moodle" in added.stdout and "部署 1, 2" in added.stdout
    again = cli("add-platform", "--data", data, *reg)
    assert again.returncode == 2 and "已经注册过了" in again.stderr
    bad = cli("add-platform", "--data", data, *reg[:-1], "http://moodle.example.edu/certs")
    assert bad.returncode == 2 and "--jwks-url 必须是 https://" in bad.stderr
    assert "https://moodle.example.edu\tclient id abc" in cli("list", "--data", data).stdout
    info = cli("info", "--data", data, "--url", "https://grader.example.edu").stdout
    assert "https://grader.example.edu/lti/login" in info and "https://grader.example.edu/lti/jwks.json" in info
    canvas = json.loads(cli("info", "--data", data, "--url", "https://grader.example.edu", "--canvas-json").stdout)
    assert canvas["oidc_initiation_url"] == "https://grader.example.edu/lti/login"
    assert canvas["public_jwk_url"] == "https://grader.example.edu/lti/jwks.json"
    assert "https://purl.imsglobal.org/spec/lti-ags/scope/score" in canvas["scopes"]
    before = keys.ToolKeys(tmp_path / "data").current().kid
    assert "已启用" in cli("rotate-key", "--data", data).stdout
    assert keys.ToolKeys(tmp_path / "data").current().kid != before
    assert cli("remove", "9", "--data", data).returncode == 2
    assert cli("remove", "1", "--data", data).returncode == 0
    assert "还没有注册课程平台" in cli("list", "--data", data).stdout
