# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The GitLab STAND-IN's projects: a bare git repository each, served over git's smart HTTP. Not GitLab.

Each project (`gpuci/canary`, id 1, unless told otherwise) is a bare
repository under the stand-in's --repos folder, made at start with one commit
on `main` holding a README, and kept across restarts. The stand-in serves it:

- to jobs, for cloning, by running git's own `git-http-backend` as a CGI
  program (https://git-scm.com/docs/git-http-backend) at `/<path>.git/...`;
  only fetching (upload-pack): nothing is pushed with a job token;
- to the REST API: files read at a ref, and commits made with git's plumbing
  (hash-object, update-index --index-info on a private index, write-tree,
  commit-tree, update-ref), so a commit is as real as one pushed.
"""
from __future__ import annotations

import base64
import os
import re
import subprocess
import tempfile
import threading
from pathlib import Path
from urllib.parse import unquote

HTTP_BACKEND = "/usr/lib/git-core/git-http-backend"
DEFAULT_BRANCH = "main"
DEFAULT_PROJECTS = ({"id": 1, "path": "gpuci/canary"},)
ZERO_SHA = "0" * 40
# Who the stand-in's commits are by (the API's caller, as GitLab would record its user).
IDENTITY = {"GIT_AUTHOR_NAME": "gpuci-standin", "GIT_AUTHOR_EMAIL": "gpuci-standin@example.invalid",
            "GIT_COMMITTER_NAME": "gpuci-standin", "GIT_COMMITTER_EMAIL": "gpuci-standin@example.invalid"}
# Ref names the stand-in accepts: branch names and commit ids, never an option-like or relative name.
REF_NAME = re.compile(r"^(?!-)(?!.*\.\.)[A-Za-z0-9._/-]+$")


class GitError(ValueError):
    """What GitLab would answer 400 to: a missing ref, a file that exists or does not."""


def readme(path: str) -> str:
    return (f"# {path}\n\nA project of the gpuci testbed's GitLab STAND-IN (tools/testbed/gitlab_standin.py),"
            " not GitLab.\n")


class Repos:
    """The projects and their bare repositories under `root`."""

    def __init__(self, root: Path, projects=DEFAULT_PROJECTS) -> None:
        self.root = Path(root)
        self._lock = threading.Lock()
        self.projects = {p["id"]: dict(p) for p in projects}
        for project in self.projects.values():
            if not self.git_dir(project).exists():
                self._init(project)

    def git_dir(self, project: dict) -> Path:
        return self.root / f"{project['path']}.git"

    def _git(self, project: dict, *args: str, data: bytes | None = None, env: dict | None = None) -> str:
        result = subprocess.run(["git", "--git-dir", str(self.git_dir(project)), *args], input=data,
                                capture_output=True, check=False, env={**os.environ, **IDENTITY, **(env or {})})
        if result.returncode != 0:
            raise GitError(result.stderr.decode(errors="replace").strip() or f"git {args[0]} failed")
        return result.stdout.decode().strip()

    def _init(self, project: dict) -> None:
        self.git_dir(project).parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "-q", "--bare", "-b", DEFAULT_BRANCH, str(self.git_dir(project))], check=True)
        self.commit(project, DEFAULT_BRANCH, "Initial commit",
                    [{"action": "create", "file_path": "README.md", "content": readme(project["path"])}])

    def find(self, ident: str) -> dict | None:
        """A project by numeric id or (URL-encoded) path, as GitLab's :id takes either."""
        ident = unquote(ident)
        if ident.isdigit():
            return self.projects.get(int(ident))
        return next((p for p in self.projects.values() if p["path"] == ident), None)

    def find_by_path(self, path: str) -> dict | None:
        return next((p for p in self.projects.values() if p["path"] == path), None)

    def head(self, project: dict, ref: str) -> str | None:
        """The commit a branch name (or a commit id) stands for; None if there is none."""
        if not REF_NAME.match(ref or ""):
            return None
        name = ref if re.fullmatch(r"[0-9a-f]{40}", ref) else f"refs/heads/{ref}"
        try:
            return self._git(project, "rev-parse", "--verify", "-q", f"{name}^{{commit}}")
        except GitError:
            return None

    def read_file(self, project: dict, file_path: str, ref: str) -> dict | None:
        """{content (bytes), blob_id, commit_id, last_commit_id} of a file at a ref; None if absent."""
        commit = self.head(project, ref)
        if commit is None or file_path.startswith("/") or ".." in file_path.split("/"):
            return None
        try:
            blob = self._git(project, "rev-parse", "--verify", "-q", f"{commit}:{file_path}")
            if self._git(project, "cat-file", "-t", blob) != "blob":
                return None
        except GitError:
            return None
        content = subprocess.run(["git", "--git-dir", str(self.git_dir(project)), "cat-file", "blob", blob],
                                 capture_output=True, check=True).stdout
        last = self._git(project, "rev-list", "-1", commit, "--", file_path)
        return {"content": content, "blob_id": blob, "commit_id": commit, "last_commit_id": last}

    def commit(self, project: dict, branch: str, message: str, actions: list[dict]) -> dict:
        """A commit on `branch` (made if the repository is empty) applying create/update/delete actions.

        GitLab's rules: create refuses a file that exists, update and delete
        one that does not (GitError: the API answers 400)."""
        if not REF_NAME.match(branch or "") or not actions:
            raise GitError("a branch and at least one action are needed")
        with self._lock, tempfile.TemporaryDirectory() as scratch:
            env = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
            parent = self.head(project, branch)
            if parent:
                self._git(project, "read-tree", parent, env=env)
            for action in actions:
                self._apply(project, action, env)
            tree = self._git(project, "write-tree", env=env)
            commit = self._git(project, "commit-tree", tree, *(["-p", parent] if parent else []), "-m", message)
            # Compare-and-swap: a concurrent writer outside this lock makes this fail, not vanish.
            self._git(project, "update-ref", f"refs/heads/{branch}", commit, parent or ZERO_SHA)
        return {"id": commit, "short_id": commit[:8], "title": message.splitlines()[0] if message else "",
                "message": message, "parent_ids": [parent] if parent else []}

    def _apply(self, project: dict, action: dict, env: dict) -> None:
        kind, path = action.get("action"), str(action.get("file_path", "")).strip("/")
        if not path or ".." in path.split("/"):
            raise GitError(f"bad file_path {path!r}")
        exists = bool(self._git(project, "ls-files", "--", path, env=env))
        if kind == "create" and exists:
            raise GitError(f"A file with this name already exists: {path}")
        if kind in ("update", "delete") and not exists:
            raise GitError(f"A file with this name doesn't exist: {path}")
        if kind not in ("create", "update", "delete"):
            raise GitError(f"unknown action {kind!r}")
        # --index-info works without a work tree; mode 0 removes the entry.
        entry = f"0 {ZERO_SHA}"
        if kind != "delete":
            content = action.get("content") or ""
            data = base64.b64decode(content) if action.get("encoding") == "base64" else content.encode()
            blob = self._git(project, "hash-object", "-w", "--stdin", data=data)
            entry = f"{'100755' if action.get('execute_filemode') else '100644'} {blob}"
        self._git(project, "update-index", "--index-info", data=f"{entry}\t{path}\n".encode(), env=env)

    def http_backend(self, project: dict, path_info: str, method: str, query: str, headers, body: bytes,
                     remote_user: str) -> subprocess.Popen:
        """git-http-backend, started as a CGI program for one request; the caller streams its stdout back.

        Its output is CGI: headers (a Status line among them), a blank line, the body."""
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": str(self.root), "GIT_HTTP_EXPORT_ALL": "1",
            "PATH_INFO": f"/{project['path']}.git{path_info}", "QUERY_STRING": query,
            "REQUEST_METHOD": method, "CONTENT_TYPE": headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)), "REMOTE_USER": remote_user, "REMOTE_ADDR": "127.0.0.1",
            # The client gzips large requests and asks for protocol v2: the backend handles both.
            "HTTP_CONTENT_ENCODING": headers.get("Content-Encoding", ""),
            **({"HTTP_GIT_PROTOCOL": headers["Git-Protocol"]} if headers.get("Git-Protocol") else {}),
            # REMOTE_USER would enable receive-pack: a job token only fetches, as GitLab's does by default.
            "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "http.receivepack", "GIT_CONFIG_VALUE_0": "false",
        }
        process = subprocess.Popen([HTTP_BACKEND], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, env=env)

        def feed() -> None:
            # In a thread: the backend may answer before it has read a large request.
            try:
                process.stdin.write(body)
            except BrokenPipeError:
                pass
            finally:
                process.stdin.close()

        threading.Thread(target=feed, daemon=True).start()
        return process
