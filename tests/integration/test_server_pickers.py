"""The browser's pickers over the API: a workspace's files for `@` mentions (git's tracked and
untracked files, ignored ones left out, bounded), a folder's subdirectories for Add project,
`~/` paths for projects, and a worktree named after an existing branch checking it out."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.gitrepo import GIT, make_repo
from tests.integration.server_support import AUTH, create_workspace, server_client

FILES = {
    "app.py": "print('hi')\n",
    "src/server/routes.py": "x = 1\n",
    "src/client/app_view.ts": "let x = 1;\n",
    "docs/guide.md": "# Guide\n",
    ".gitignore": "secret.env\nbuild/\n",
}


def test_workspace_files_match_what_was_typed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    (repo / "secret.env").write_text("TOKEN=1\n")  # ignored
    (repo / "build").mkdir()
    (repo / "build" / "out.js").write_text("1\n")  # ignored
    (repo / "notes.txt").write_text("untracked\n")  # untracked, not ignored
    with server_client() as client:
        ws = create_workspace(client, repo)
        url = f"/api/workspaces/{ws['id']}/files"
        everything = client.get(url, params={"limit": 50}, headers=AUTH).json()["paths"]
        assert set(everything) == {*FILES, "notes.txt"}
        # Paths starting with it first, then file names starting with it, then any containing it.
        found = client.get(url, params={"q": "app"}, headers=AUTH).json()["paths"]
        assert found == ["app.py", "src/client/app_view.ts"]
        assert client.get(url, params={"q": "ROUTES"}, headers=AUTH).json()["paths"] == [
            "src/server/routes.py"
        ]
        assert len(client.get(url, params={"limit": 2}, headers=AUTH).json()["paths"]) == 2
        assert client.get(url, params={"limit": 500}, headers=AUTH).status_code == 422
        assert client.get(url).status_code == 401
        assert client.get("/api/workspaces/nope/files", headers=AUTH).status_code == 404


def test_files_outside_git_skip_hidden_folders(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    (plain / ".cache").mkdir(parents=True)
    (plain / ".cache" / "blob").write_text("x")
    (plain / "lib").mkdir()
    (plain / "lib" / "util.py").write_text("x")
    (plain / "README").write_text("x")
    with server_client() as client:
        ws = create_workspace(client, plain)
        paths = client.get(f"/api/workspaces/{ws['id']}/files", headers=AUTH).json()["paths"]
        assert sorted(paths) == ["README", "lib/util.py"]


def test_folder_browser_lists_subdirectories(tmp_path: Path) -> None:
    home = Path(os.environ["HOME"])
    (home / "proj").mkdir()
    (home / "proj" / "inner").mkdir()
    (home / ".hidden").mkdir()
    (home / "file.txt").write_text("x")
    with server_client() as client:
        first = client.get("/api/fs/dirs", headers=AUTH).json()  # the home directory
        assert first["path"] == str(home.resolve()) and first["home"] == str(home)
        assert "proj" in first["dirs"] and ".hidden" not in first["dirs"]
        assert "file.txt" not in first["dirs"]
        shown = client.get("/api/fs/dirs", params={"hidden": "true"}, headers=AUTH).json()
        assert ".hidden" in shown["dirs"]
        inner = client.get("/api/fs/dirs", params={"path": "~/proj"}, headers=AUTH).json()
        assert inner["dirs"] == ["inner"] and inner["parent"] == str(home.resolve())
        root = client.get("/api/fs/dirs", params={"path": "/"}, headers=AUTH).json()
        assert root["parent"] is None
        missing = client.get("/api/fs/dirs", params={"path": str(home / "nope")}, headers=AUTH)
        assert missing.status_code == 404
        relative = client.get("/api/fs/dirs", params={"path": "proj"}, headers=AUTH)
        assert relative.status_code == 422
        assert client.get("/api/fs/dirs").status_code == 401


def test_a_project_path_may_start_with_the_home_directory(tmp_path: Path) -> None:
    home = Path(os.environ["HOME"])
    repo = make_repo(home / "proj")
    with server_client() as client:
        res = client.post("/api/projects", json={"path": "~/proj"}, headers=AUTH)
        assert res.status_code == 201, res.text
        assert res.json()["path"] == str(repo.resolve())


def git(repo: Path, *args: str) -> str:
    done = subprocess.run([*GIT, *args], cwd=repo, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def test_a_worktree_named_after_a_branch_checks_it_out_and_keeps_it(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    git(repo, "checkout", "-q", "-b", "feature-x")
    (repo / "feature.txt").write_text("on the branch\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "feature")
    tip = git(repo, "rev-parse", "feature-x")
    git(repo, "checkout", "-q", "main")
    with server_client() as client:
        ws = create_workspace(client, repo, runtime="worktree", name="feature-x")
        assert ws["branch"] == "feature-x"
        checkout = Path(ws["path"])
        assert (checkout / "feature.txt").read_text() == "on the branch\n"
        assert git(checkout, "rev-parse", "HEAD") == tip
        assert git(checkout, "symbolic-ref", "--short", "HEAD") == "feature-x"
        # The branch the project's own checkout has out cannot be checked out a second time.
        taken = client.post(
            "/api/workspaces",
            json={"projectPath": str(repo), "runtime": {"type": "worktree"}, "name": "main"},
            headers=AUTH,
        )
        assert taken.status_code == 400, taken.text
        assert "checked out" in taken.json()["error"]["hint"]
        listed = client.get("/api/workspaces", headers=AUTH).json()["workspaces"]
        assert [w["name"] for w in listed] == ["feature-x"]  # nothing left behind
        # A name that is no branch makes a new one, as before.
        other = create_workspace(client, repo, runtime="worktree", name="brand-new")
        assert other["branch"] == "brand-new"

        # A rename moves the worktree and leaves the user's branch as it is.
        renamed = client.post(
            f"/api/workspaces/{ws['id']}/rename", json={"name": "feature-work"}, headers=AUTH
        )
        assert renamed.status_code == 200, renamed.text
        assert renamed.json()["branch"] == "feature-x"
        checkout = Path(renamed.json()["path"])
        assert git(checkout, "symbolic-ref", "--short", "HEAD") == "feature-x"
        assert git(repo, "branch", "--list", "feature-work") == ""

        preview = client.get(
            f"/api/workspaces/{ws['id']}/deletion", params={"branch": "always"}, headers=AUTH
        ).json()
        assert not any(r["kind"] == "branch" for r in preview["removes"]), preview
        assert any(k.startswith("branch feature-x") for k in preview["keeps"]), preview
        res = client.delete(
            f"/api/workspaces/{ws['id']}", params={"branch": "always"}, headers=AUTH
        )
        assert res.status_code == 200, res.text
        assert res.json()["branchDeleted"] is False
        assert git(repo, "rev-parse", "feature-x") == tip  # the user's branch is still there
        assert not checkout.exists()
