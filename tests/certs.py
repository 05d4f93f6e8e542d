"""Throwaway TLS certificates for tests, made with the openssl CLI."""

from __future__ import annotations

import subprocess
from pathlib import Path


def make_certs(directory: Path, host: str = "site.test") -> tuple[Path, Path, Path]:
    """A throwaway CA and a server certificate for `host`: (ca.pem, srv.pem, srv.key)."""

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=directory, check=True, capture_output=True)

    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    openssl(
        "req",
        "-x509",
        *ec,
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=xum test CA",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
    )
    openssl("req", *ec, "-keyout", "srv.key", "-out", "srv.csr", "-subj", f"/CN={host}")
    (directory / "ext.cnf").write_text(
        f"subjectAltName=DNS:{host}\nbasicConstraints=CA:FALSE\n"
        "authorityKeyIdentifier=keyid,issuer\nextendedKeyUsage=serverAuth\n"
    )
    openssl(
        "x509",
        "-req",
        "-in",
        "srv.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "srv.pem",
        "-days",
        "2",
        "-extfile",
        "ext.cnf",
    )
    return directory / "ca.pem", directory / "srv.pem", directory / "srv.key"
