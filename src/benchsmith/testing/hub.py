"""A local, in-memory Hugging Face Hub for tests (dataset repos only).

It speaks the HTTP endpoints that the installed ``huggingface_hub`` calls to publish a
folder (``create_repo``, ``repo_info``/``repo_exists``, ``list_repo_refs``,
``list_repo_files``/tree, ``/api/validate-yaml``, preupload + ndjson commit, the git-LFS
batch API with basic PUT uploads, ``create_tag``, ``delete_repo``) and those that
``datasets.load_dataset("org/name", config, revision=...)`` calls through ``HF_ENDPOINT``
(dataset info per revision, tree listing, paths-info, ``resolve/<revision>/<path>`` with
HEAD and GET, ``ETag``/``X-Repo-Commit``/``Content-Length``, ranges). Anything else
answers 404 and is recorded, so a new call the client makes shows up in
:attr:`LocalHub.requests` rather than being silently served.

State is a dict per repo: ``commits`` (commit id -> {path: File}), ``branches``
(``main``) and ``tags``; a new repo starts with one commit holding ``.gitattributes``, as
on the Hub. Uploads are regular (base64 in the commit) unless a path ends with one of
``lfs_suffixes``, which then go through the LFS batch API. There is no xet endpoint: a
client that tries xet gets a 404, as from a Hub without xet.

Faults for tests: ``fail={"commit": 500, "tag": 500}`` answers that status to every commit
or tag (``echo_auth`` puts the request's ``Authorization`` header into that error, as a
careless proxy might); ``flaky={"commit": (503, 2)}`` answers that status to the first 2
commits (or tags, ``"tree"`` listings) and then serves them (a transient fault that clears);
``lose={"commit": 1}`` makes the first commit (or tag) land and then answers 504, as a
gateway whose response was lost; ``intrude={"commit": 1}`` lands another publisher's commit on
the branch just before the first commit (which then fails with 412, as in a race of two
publishes), ``intrude={"tag": 1}`` tags the same revision just before the first tag (which then
fails with 409, as when a racing publisher of the same release tags first); ``drip=SECONDS`` sends
every response body one byte per SECONDS, ``drip_headers=SECONDS`` every status line and header
block (a server no per-read timeout ever stops);
``listing_padding=N`` adds N folders to every listing of a revision's root; ``token`` (only this bearer token may write; others get the Hub's
401 "Invalid credentials in Authorization header"). A hostile Hub for reads: ``hostile={"tree":
"garbage"}`` answers a kind of read (``info``, ``refs``, ``tree``, ``paths-info``, ``resolve``,
``commits``) with 200 and bytes that are no JSON (``"garbage"``), with a status (``"500"``),
with a redirect to itself (``"loop"``) or to ``redirect_to`` (``"away"``: another host, the same
path). Every ``Authorization`` header received is kept in :attr:`LocalHub.authorizations`.

The server listens on 127.0.0.1 on a free port, serves from one thread (requests in
worker threads), stops after ``max_requests`` requests or ``max_seconds``, and
:meth:`LocalHub.stop` (or leaving the ``with`` block) shuts it down.
"""

from __future__ import annotations

import base64
import hashlib
import json
import socket
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import parse_qs, quote, unquote, urlsplit

from huggingface_hub import constants

GITATTRIBUTES = b"*.parquet filter=lfs diff=lfs merge=lfs -text\n"


@dataclass(frozen=True)
class File:
    data: bytes
    lfs: bool = False

    @property
    def git_oid(self) -> str:
        return hashlib.sha1(b"blob %d\0" % len(self.data) + self.data).hexdigest()

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @property
    def etag(self) -> str:  # the Hub's ETag: sha256 for LFS files, git blob id otherwise
        return self.sha256 if self.lfs else self.git_oid


@dataclass
class Repo:
    repo_id: str
    commits: dict[str, dict[str, File]] = field(default_factory=dict)
    messages: dict[str, str] = field(default_factory=dict)
    parents: dict[str, str | None] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)

    def resolve(self, revision: str) -> str | None:
        revision = unquote(revision)
        if revision in self.branches:
            return self.branches[revision]
        if revision in self.tags:
            return self.tags[revision]
        return revision if revision in self.commits else None

    def history(self, revision: str = "main") -> list[str]:
        """Commit ids from ``revision`` back to the first commit (newest first)."""
        out, oid = [], self.resolve(revision)
        while oid is not None:
            out.append(oid)
            oid = self.parents.get(oid)
        return out

    def files(self, revision: str = "main") -> dict[str, bytes]:
        """{path: bytes} at a branch, tag or commit (what the tests assert on)."""
        oid = self.resolve(revision)
        if oid is None:
            raise KeyError(f"{self.repo_id} has no revision {revision!r}")
        return {p: f.data for p, f in self.commits[oid].items()}


class HubError(Exception):
    def __init__(self, status: int, message: str, code: str | None = None, **extra: Any):
        super().__init__(message)
        self.status, self.message, self.code, self.extra = status, message, code, extra


class LocalHub:
    """An in-memory Hub on ``http://127.0.0.1:<port>``; use as a context manager.

    In a test, publish to it and load from it as from the Hub::

        with LocalHub(token="hf_test") as hub:
            publish_hub(release, "my-org/my_bench", endpoint=hub.url, token="hf_test")
            hub.repo("my-org/my_bench").tags        # {"1.0.0": commit id}

    ``datasets.load_dataset`` and ``huggingface_hub`` read ``HF_ENDPOINT`` (set it to
    ``hub.url``, with ``HF_TOKEN``, in the environment before they are imported, or of a
    subprocess). From the command line, start one in a process that keeps it open, then publish
    with ``--endpoint`` (or ``HF_ENDPOINT``) and its token, and load from it::

        python -c "import time; from benchsmith.testing.hub import LocalHub
        with LocalHub(token='hf_test', max_seconds=3600) as hub:
            print(hub.url, flush=True); time.sleep(3600)" > hub.url &
        sleep 2   # until hub.url holds the address
        HF_TOKEN=hf_test benchsmith publish my_bench/1.0.0 --hub my-org/my_bench --endpoint "$(cat hub.url)"
        HF_ENDPOINT="$(cat hub.url)" python -c "import datasets; print(datasets.load_dataset('my-org/my_bench', revision='1.0.0'))"

    ``tests/test_docs.py`` runs the documentation's commands against one through
    ``HF_ENDPOINT``. It keeps everything in memory and stops after ``max_requests`` requests or
    ``max_seconds``.
    """

    def __init__(self, *, lfs_suffixes: tuple[str, ...] = (), token: str | None = None,
                 fail: dict[str, int] | None = None, echo_auth: bool = False,
                 flaky: dict[str, tuple[int, int]] | None = None, lose: dict[str, int] | None = None,
                 intrude: dict[str, int] | None = None, drip: float = 0.0, drip_headers: float = 0.0,
                 listing_padding: int = 0, max_requests: int = 2000, max_seconds: float = 120.0,
                 hostile: dict[str, str] | None = None, redirect_to: str | None = None):
        self.repos: dict[str, Repo] = {}
        self.blobs: dict[str, bytes] = {}  # LFS objects by sha256
        self.lfs_suffixes = lfs_suffixes
        self.token = token
        self.fail = dict(fail or {})
        self.flaky = dict(flaky or {})
        self.lose = dict(lose or {})
        self.intrude = dict(intrude or {})
        self.drip = drip
        self.drip_headers = drip_headers
        self.listing_padding = listing_padding
        self.echo_auth = echo_auth
        self.hostile = dict(hostile or {})
        self.redirect_to = redirect_to
        self.authorizations: list[str] = []  # every Authorization header received
        self.max_requests = max_requests
        self.max_seconds = max_seconds
        self.requests: list[str] = []  # "METHOD /path status"
        self.unknown: list[str] = []  # requests no route matched
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._counter = 0
        self._connections: set[Any] = set()  # open client sockets, shut down by stop()

    # ------------------------------------------------------------------ lifecycle

    @property
    def url(self) -> str:
        assert self._server is not None, "start() the hub first"
        host, port = self._server.server_address[:2]
        return f"http://{host.decode() if isinstance(host, bytes) else host}:{port}"

    def start(self) -> Self:
        hub = self

        class Handler(_Handler):
            pass

        Handler.hub = hub
        self._server = _Server(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = False  # server_close() joins the request threads
        self._server.block_on_close = True
        self._server.timeout = 0.05
        self._thread = threading.Thread(target=self._serve, name="local-hub", daemon=True)
        self._thread.start()
        return self

    def _serve(self) -> None:
        deadline = time.monotonic() + self.max_seconds
        assert self._server is not None
        while not self._stop.is_set() and time.monotonic() < deadline and len(self.requests) < self.max_requests:
            self._server.handle_request()

    def stop(self) -> None:
        """Stop accepting, close the clients' keep-alive connections, join every thread."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        with self._lock:
            for conn in list(self._connections):
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        if self._server is not None:
            self._server.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ state helpers

    def repo(self, repo_id: str) -> Repo:
        return self.repos[repo_id]

    def _new_oid(self, seed: str) -> str:
        with self._lock:
            self._counter += 1
            return hashlib.sha1(f"{seed}:{self._counter}:{time.time_ns()}".encode()).hexdigest()

    def _get_repo(self, repo_id: str) -> Repo:
        repo = self.repos.get(repo_id)
        if repo is None:
            raise HubError(404, f"Repository {repo_id} not found", "RepoNotFound")
        return repo

    def _get_revision(self, repo: Repo, revision: str) -> str:
        oid = repo.resolve(revision)
        if oid is None:
            raise HubError(404, f"Invalid rev id: {unquote(revision)}", "RevisionNotFound")
        return oid

    def _flake(self, action: str) -> None:
        with self._lock:
            status, left = self.flaky.get(action, (0, 0))
            if left > 0:
                self.flaky[action] = (status, left - 1)
                raise HubError(status, f"the test Hub was told to fail this {action} transiently")

    def _lost(self, action: str) -> None:
        """After ``action`` took effect: answer 504 if told to lose its response."""
        with self._lock:
            if self.lose.get(action, 0) > 0:
                self.lose[action] -= 1
                raise HubError(504, f"Gateway Timeout (the test Hub did this {action} and lost the response)")

    def _check_write(self, headers: Any, action: str | None = None) -> None:
        if action is not None:
            self._flake(action)
        if self.token is not None and headers.get("Authorization") != f"Bearer {self.token}":
            raise HubError(401, "Invalid credentials in Authorization header")
        if action in self.fail:
            said = f" (Authorization: {headers.get('Authorization')})" if self.echo_auth else ""
            raise HubError(self.fail[action], f"the test Hub was told to fail this {action}{said}")

    # ------------------------------------------------------------------ API: repos

    def create_repo(self, body: dict, base: str) -> dict:
        if body.get("type", "model") != "dataset":
            raise HubError(400, "this test Hub holds dataset repos only")
        repo_id = f"{body['organization']}/{body['name']}" if body.get("organization") else body["name"]
        with self._lock:
            if repo_id in self.repos:
                raise HubError(409, "You already created this dataset repo", url=f"{base}/datasets/{repo_id}")
            repo = Repo(repo_id)
            oid = self._new_oid(repo_id)
            repo.commits[oid] = {".gitattributes": File(GITATTRIBUTES)}
            repo.messages[oid] = "initial commit"
            repo.parents[oid] = None
            repo.branches["main"] = oid
            self.repos[repo_id] = repo
        return {"url": f"{base}/datasets/{repo_id}", "name": repo_id, "id": repo_id}

    def delete_repo(self, body: dict) -> dict:
        repo_id = f"{body['organization']}/{body['name']}" if body.get("organization") else body["name"]
        with self._lock:
            self._get_repo(repo_id)
            del self.repos[repo_id]
        return {}

    def info(self, repo_id: str, revision: str) -> dict:
        repo = self._get_repo(repo_id)
        oid = self._get_revision(repo, revision)
        org, _, _ = repo_id.rpartition("/")
        files = repo.commits[oid]
        return {
            "_id": hashlib.md5(repo_id.encode()).hexdigest()[:24], "id": repo_id, "author": org or None,
            "sha": oid, "lastModified": _now(), "createdAt": _now(), "private": False, "gated": False,
            "disabled": False, "downloads": 0, "likes": 0, "tags": [], "cardData": None,
            "siblings": [{"rfilename": p} for p in sorted(files)],
        }

    def refs(self, repo_id: str) -> dict:
        repo = self._get_repo(repo_id)
        return {
            "branches": [{"name": b, "ref": f"refs/heads/{b}", "targetCommit": o} for b, o in repo.branches.items()],
            "tags": [{"name": t, "ref": f"refs/tags/{t}", "targetCommit": o} for t, o in repo.tags.items()],
            "converts": [],
        }

    def commits(self, repo_id: str, revision: str) -> list[dict]:
        repo = self._get_repo(repo_id)
        self._get_revision(repo, revision)
        return [{"id": oid, "title": repo.messages.get(oid, ""), "message": "", "authors": [{"user": "test"}],
                 "date": _now()} for oid in repo.history(revision)]

    def create_tag(self, repo_id: str, revision: str, body: dict) -> dict:
        with self._lock:
            repo = self._get_repo(repo_id)
            oid = self._get_revision(repo, revision)
            tag = body["tag"]
            if self.intrude.get("tag", 0) > 0 and tag not in repo.tags:  # a racing publisher tags it first
                self.intrude["tag"] -= 1
                repo.tags[tag] = oid
            if tag in repo.tags:
                raise HubError(409, f"Tag {tag} already exists")
            repo.tags[tag] = oid
        return {}

    # ------------------------------------------------------------------ API: tree

    def _entries(self, files: dict[str, File], oid: str, prefix: str, recursive: bool) -> list[dict]:
        prefix = prefix.strip("/")
        base = f"{prefix}/" if prefix else ""
        out: dict[str, dict] = {}
        for path in sorted(files):
            if not path.startswith(base):
                continue
            rest = path[len(base):]
            parts = rest.split("/")
            for depth in range(1, len(parts)):  # folders on the way
                if not recursive and depth > 1:
                    break
                folder = base + "/".join(parts[:depth])
                out.setdefault(folder, {"type": "directory", "path": folder,
                                        "oid": hashlib.sha1(f"{oid}:{folder}".encode()).hexdigest()})
            if recursive or len(parts) == 1:
                out[path] = self._file_entry(path, files[path])
        return list(out.values())

    @staticmethod
    def _file_entry(path: str, f: File) -> dict:
        entry: dict[str, Any] = {"type": "file", "path": path, "size": len(f.data), "oid": f.git_oid}
        if f.lfs:
            entry["lfs"] = {"oid": f.sha256, "size": len(f.data), "pointerSize": 134}
        return entry

    def tree(self, repo_id: str, revision: str, path: str, recursive: bool) -> list[dict]:
        repo = self._get_repo(repo_id)
        oid = self._get_revision(repo, revision)
        files = repo.commits[oid]
        path = path.strip("/")
        if path and path in files:
            raise HubError(404, f"{path} is a file, not a folder", "EntryNotFound")
        entries = self._entries(files, oid, path, recursive)
        if not path:  # a hostile listing: many more entries than the commit holds
            entries += [{"type": "directory", "oid": "0" * 40, "path": f"padding/{i:06d}"}
                        for i in range(self.listing_padding)]
        if path and not entries:
            raise HubError(404, f"Entry not found: {path}", "EntryNotFound")
        return entries

    def paths_info(self, repo_id: str, revision: str, paths: list[str]) -> list[dict]:
        repo = self._get_repo(repo_id)
        oid = self._get_revision(repo, revision)
        files = repo.commits[oid]
        out = []
        for path in paths:
            path = path.strip("/")
            if path in files:
                out.append(self._file_entry(path, files[path]))
            elif any(p.startswith(path + "/") for p in files):
                out.append({"type": "directory", "path": path,
                            "oid": hashlib.sha1(f"{oid}:{path}".encode()).hexdigest()})
        return out

    # ------------------------------------------------------------------ API: upload + commit

    def preupload(self, repo_id: str, revision: str, body: dict) -> dict:
        repo = self._get_repo(repo_id)
        oid = self._get_revision(repo, revision)
        current = repo.commits[oid]
        files = []
        for item in body.get("files", []):
            path = item["path"]
            mode = "lfs" if path.endswith(self.lfs_suffixes) and item.get("size", 0) > 0 else "regular"
            existing = current.get(path)
            files.append({"path": path, "uploadMode": mode, "shouldIgnore": False,
                          "oid": (existing.etag if existing is not None else None)})
        return {"files": files, "commitOid": oid}

    def lfs_batch(self, repo_id: str, body: dict, base: str) -> dict:
        self._get_repo(repo_id)
        objects = []
        for obj in body.get("objects", []):
            entry: dict[str, Any] = {"oid": obj["oid"], "size": obj["size"], "authenticated": True}
            if obj["oid"] not in self.blobs:
                entry["actions"] = {"upload": {"href": f"{base}/_lfs/{obj['oid']}", "header": {}}}
            objects.append(entry)
        return {"transfer": "basic", "objects": objects}

    def lfs_put(self, oid: str, data: bytes) -> dict:
        if hashlib.sha256(data).hexdigest() != oid:
            raise HubError(400, "sha256 of the uploaded object differs from its oid")
        with self._lock:
            self.blobs[oid] = data
        return {}

    def commit(self, repo_id: str, revision: str, ndjson: bytes, base: str) -> dict:
        lines = [json.loads(line) for line in ndjson.splitlines() if line.strip()]
        with self._lock:
            repo = self._get_repo(repo_id)
            branch = unquote(revision)
            if branch not in repo.branches:
                raise HubError(404, f"Invalid rev id: {branch}", "RevisionNotFound")
            if self.intrude.get("commit", 0) > 0:  # another writer's commit lands first
                self.intrude["commit"] -= 1
                other = self._new_oid(repo_id)
                repo.commits[other] = dict(repo.commits[repo.branches[branch]]) | {
                    "intruder.txt": File(b"committed by another publisher\n")}
                repo.messages[other], repo.parents[other] = "another publisher", repo.branches[branch]
                repo.branches[branch] = other
            head = repo.branches[branch]
            files = dict(repo.commits[head])
            summary = ""
            for item in lines:
                key, value = item["key"], item["value"]
                if key == "header":
                    summary = value.get("summary", "")
                    parent = value.get("parentCommit")
                    if parent and not head.startswith(parent):
                        raise HubError(412, f"A commit has happened since {parent}; {branch} is at {head}")
                elif key == "file":
                    if value.get("encoding", "base64") != "base64":
                        raise HubError(400, f"unsupported encoding {value.get('encoding')!r}")
                    files[value["path"]] = File(base64.b64decode(value["content"]))
                elif key == "lfsFile":
                    data = self.blobs.get(value["oid"])
                    if data is None:
                        raise HubError(400, f"LFS object {value['oid']} of {value['path']} was never uploaded")
                    files[value["path"]] = File(data, lfs=True)
                elif key == "deletedFile":
                    if value["path"] not in files:
                        raise HubError(404, f"A file with this name doesn't exist: {value['path']}", "EntryNotFound")
                    del files[value["path"]]
                elif key == "deletedFolder":
                    prefix = value["path"].rstrip("/") + "/"
                    for p in [p for p in files if p.startswith(prefix)]:
                        del files[p]
                else:
                    raise HubError(400, f"this test Hub does not know commit operation {key!r}")
            oid = self._new_oid(repo_id)
            repo.commits[oid] = files
            repo.messages[oid] = summary
            repo.parents[oid] = head
            repo.branches[branch] = oid
        return {"commitUrl": f"{base}/datasets/{repo_id}/commit/{oid}", "commitOid": oid, "success": True,
                "hookOutput": "", "pullRequestUrl": None}

    # ------------------------------------------------------------------ files

    def file(self, repo_id: str, revision: str, path: str) -> tuple[str, File]:
        repo = self._get_repo(repo_id)
        oid = self._get_revision(repo, revision)
        f = repo.commits[oid].get(path)
        if f is None:
            raise HubError(404, f"Entry not found: {path}", "EntryNotFound")
        return oid, f


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that gave up mid-answer (a deadline, a dripped body): not the test's output


class _Handler(BaseHTTPRequestHandler):
    hub: LocalHub
    protocol_version = "HTTP/1.1"
    timeout = 10  # an idle keep-alive connection is closed after this many seconds

    def setup(self) -> None:
        super().setup()
        with self.hub._lock:
            self.hub._connections.add(self.connection)

    def finish(self) -> None:
        with self.hub._lock:
            self.hub._connections.discard(self.connection)
        super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        pass  # requests are recorded in hub.requests instead

    # -------------------------------------------------------------- plumbing

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    self.rfile.readline()
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None,
              content_type: str = "application/json", head: bool = False) -> None:
        fields = {"Content-Type": content_type, **(headers or {})}
        fields.setdefault("Content-Length", str(len(body)))
        if self.hub.drip_headers > 0:  # the status line and headers, one byte at a time
            self.log_request(status)
            lines = [f"{self.protocol_version} {status} {self.responses.get(status, ('',))[0]}"]
            lines += [f"{k}: {v}" for k, v in fields.items()]
            self._drip(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"), self.hub.drip_headers)
        else:
            self.send_response(status)
            for k, v in fields.items():
                self.send_header(k, v)
            self.end_headers()
        if not head and body and self.hub.drip > 0:  # a Hub (or proxy) that drips its answers
            self._drip(body, self.hub.drip)
        elif not head and body:
            self.wfile.write(body)
        self.hub.requests.append(f"{self.command} {self.path} {status}")

    def _drip(self, data: bytes, seconds: float) -> None:
        for i in range(len(data)):
            if self.hub._stop.wait(seconds):
                break
            self.wfile.write(data[i:i + 1])
            self.wfile.flush()

    def _json(self, status: int, obj: Any) -> None:
        self._send(status, json.dumps(obj).encode())

    def _error(self, exc: HubError) -> None:
        headers = {"X-Error-Message": exc.message}
        if exc.code:
            headers["X-Error-Code"] = exc.code
        self._send(exc.status, json.dumps({"error": exc.message, **exc.extra}).encode(), headers,
                   head=self.command == "HEAD")

    @property
    def _base(self) -> str:
        return self.hub.url

    def _dispatch(self) -> None:
        if (auth := self.headers.get("Authorization")) is not None:
            self.hub.authorizations.append(auth)
        if len(self.hub.requests) >= self.hub.max_requests or self.hub._stop.is_set():
            self.close_connection = True
            return self._error(HubError(503, "the test Hub has stopped serving"))
        try:
            self._route()
        except HubError as exc:
            self._error(exc)
        except Exception as exc:  # noqa: BLE001 - a bug in the test Hub: a 500 naming it, keep serving
            self._error(HubError(500, f"test Hub error: {type(exc).__name__}: {exc}"))

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = _dispatch

    # -------------------------------------------------------------- routes

    def _route(self) -> None:
        hub, method = self.hub, self.command
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        parts = [unquote(p) for p in url.path.split("/")[1:]]
        raw_parts = url.path.split("/")[1:]
        body = self._body() if method in ("POST", "PUT", "DELETE") else b""

        if parts[:2] == ["api", "repos"] and len(parts) == 3:
            if parts[2] == "create" and method == "POST":
                hub._check_write(self.headers)
                return self._json(200, hub.create_repo(json.loads(body), self._base))
            if parts[2] == "delete" and method == "DELETE":
                hub._check_write(self.headers)
                return self._json(200, hub.delete_repo(json.loads(body)))
        if parts == ["api", "validate-yaml"] and method == "POST":
            return self._json(200, {"errors": [], "warnings": []})
        if parts[:2] == ["api", "datasets"] and len(parts) >= 4:
            repo_id = f"{parts[2]}/{parts[3]}"
            rest, raw_rest = parts[4:], raw_parts[4:]
            if not rest and method == "GET":
                if not self._hostile("info"):
                    self._json(200, hub.info(repo_id, "main"))
                return None
            if rest[:1] == ["revision"] and len(rest) >= 2 and method == "GET":
                if not self._hostile("info"):
                    self._json(200, hub.info(repo_id, "/".join(rest[1:])))
                return None
            if rest == ["refs"] and method == "GET":
                if not self._hostile("refs"):
                    self._json(200, hub.refs(repo_id))
                return None
            if rest[:1] == ["commits"] and len(rest) >= 2 and method == "GET":
                if not self._hostile("commits"):
                    self._json(200, hub.commits(repo_id, "/".join(rest[1:])))
                return None
            if rest[:1] == ["tree"] and len(rest) >= 2 and method == "GET":
                if self._hostile("tree"):
                    return None
                hub._flake("tree")
                recursive = query.get("recursive", ["false"])[0].lower() in ("1", "true")
                entries = hub.tree(repo_id, unquote(raw_rest[1]), "/".join(rest[2:]), recursive)
                return self._json(200, entries)
            if rest[:1] == ["paths-info"] and len(rest) == 2 and method == "POST" and self._hostile("paths-info"):
                return None
            if rest[:1] == ["paths-info"] and len(rest) == 2 and method == "POST":
                if "json" in self.headers.get("Content-Type", ""):
                    paths = json.loads(body).get("paths", [])
                else:
                    paths = parse_qs(body.decode()).get("paths", [])
                return self._json(200, hub.paths_info(repo_id, rest[1], paths))
            if rest[:1] == ["preupload"] and len(rest) == 2 and method == "POST":
                hub._check_write(self.headers)
                return self._json(200, hub.preupload(repo_id, rest[1], json.loads(body)))
            if rest[:1] == ["commit"] and len(rest) == 2 and method == "POST":
                hub._check_write(self.headers, "commit")
                done = hub.commit(repo_id, rest[1], body, self._base)
                hub._lost("commit")
                return self._json(200, done)
            if rest[:1] == ["tag"] and len(rest) == 2 and method == "POST":
                hub._check_write(self.headers, "tag")
                done = hub.create_tag(repo_id, rest[1], json.loads(body))
                hub._lost("tag")
                return self._json(200, done)
        if parts[:1] == ["datasets"] and len(parts) >= 4:
            name = parts[2]
            if name.endswith(".git") and parts[3:] == ["info", "lfs", "objects", "batch"] and method == "POST":
                hub._check_write(self.headers)
                repo_id = f"{parts[1]}/{name[:-4]}"
                return self._send(200, json.dumps(hub.lfs_batch(repo_id, json.loads(body), self._base)).encode(),
                                  content_type="application/vnd.git-lfs+json")
            if parts[3] == "resolve" and len(parts) >= 6 and method in ("GET", "HEAD"):
                if self._hostile("resolve"):
                    return None
                return self._file(f"{parts[1]}/{parts[2]}", unquote(raw_parts[4]), "/".join(parts[5:]))
        if parts[:1] == ["_lfs"] and len(parts) == 2 and method == "PUT":
            return self._json(200, hub.lfs_put(parts[1], body))
        hub.unknown.append(f"{method} {self.path}")
        raise HubError(404, f"the test Hub has no route for {method} {url.path}")

    def _hostile(self, kind: str) -> bool:
        """Answer a read of ``kind`` as ``hub.hostile`` says (True), or leave it to the route (False)."""
        how = self.hub.hostile.get(kind)
        if how is None:
            return False
        if how == "garbage":
            self._send(200, b'{"not json": [1, 2,' + b"\xff" * 16, head=self.command == "HEAD")
        elif how in ("loop", "away"):
            base = self.hub.redirect_to if how == "away" and self.hub.redirect_to else self.hub.url
            self._send(302, headers={"Location": base + self.path}, head=True)
        else:
            self._error(HubError(int(how), f"the test Hub was told to answer {how} to this {kind}"))
        return True

    def _file(self, repo_id: str, revision: str, path: str) -> None:
        commit, f = self.hub.file(repo_id, revision, path)
        data = f.data
        headers = {"ETag": f'"{f.etag}"', "X-Repo-Commit": commit, "Accept-Ranges": "bytes",
                   "Content-Disposition": f"inline; filename*=UTF-8''{quote(path.rsplit('/', 1)[-1])}"}
        if f.lfs:
            headers["X-Linked-Etag"] = f'"{f.etag}"'
            headers["X-Linked-Size"] = str(len(data))
        status = 200
        rng = self.headers.get("Range")
        if rng and rng.startswith("bytes="):
            start_s, _, end_s = rng[len("bytes="):].split(",")[0].partition("-")
            if start_s:
                start = int(start_s)
                end = min(int(end_s), len(data) - 1) if end_s else len(data) - 1
            else:  # suffix range: the last N bytes
                start, end = max(0, len(data) - int(end_s)), len(data) - 1
            if start >= len(data) and data:
                raise HubError(416, "Range Not Satisfiable")
            headers["Content-Range"] = f"bytes {start}-{end}/{len(data)}"
            data, status = data[start:end + 1], 206
        headers["Content-Length"] = str(len(data))
        self._send(status, data, headers, content_type="application/octet-stream", head=self.command == "HEAD")


# ---------------------------------------------------------------------- test helpers


FAKE_TOKEN = "hf_localHubFakeToken000000"


def go_online(monkeypatch: Any) -> None:
    """Let huggingface_hub make HTTP calls in this test. tests/conftest.py exports
    ``HF_HUB_OFFLINE=1`` before huggingface_hub is imported, and the library reads it once,
    into ``huggingface_hub.constants``; the attribute is what every request checks.
    ``HF_TOKEN`` is set to a fake, so a developer's stored token is never read or sent."""

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_TOKEN", FAKE_TOKEN)


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
