# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A throwaway CA, the API server's serving certificate and the service account keys."""
from __future__ import annotations

import datetime
import ipaddress
import secrets
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

from .layout import REAL_NODE, Layout

# Users of the static token file: component name -> (user, groups).
USERS = {
    "admin": ("gpuci-admin", "system:masters"),
    "controller-manager": ("system:kube-controller-manager", ""),
    "scheduler": ("system:kube-scheduler", ""),
    "kwok": ("kwok-controller", "system:masters"),
    # The real node's kubelet: the Node authorizer and NodeRestriction apply.
    "kubelet": (f"system:node:{REAL_NODE}", "system:nodes"),
}


def _write_key(path: Path, key) -> None:
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    path.chmod(0o600)


def _certificate(subject: str, public_key, issuer_key, issuer_name, *, ca: bool, sans=(), organization=""):
    now = datetime.datetime.now(datetime.timezone.utc)
    name = [x509.NameAttribute(NameOID.COMMON_NAME, subject)]
    if organization:
        name.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
    builder = (x509.CertificateBuilder()
               .subject_name(x509.Name(name))
               .issuer_name(issuer_name or x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
               .public_key(public_key)
               .serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(minutes=5))
               .not_valid_after(now + datetime.timedelta(days=2))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(list(sans)), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def _write_pair(pki: Path, name: str, key, cert) -> None:
    _write_key(pki / f"{name}.key", key)
    (pki / f"{name}.crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))


def write_all(layout: Layout) -> None:
    pki = layout.pki
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = _certificate("gpuci-testbed-ca", ca_key.public_key(), ca_key, None, ca=True)
    server_key = ec.generate_private_key(ec.SECP256R1())
    sans = [x509.DNSName(n) for n in ("localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc")]
    sans += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ("127.0.0.1", layout.service_host)]
    server_cert = _certificate("kube-apiserver", server_key.public_key(), ca_key, ca_cert.subject, ca=False, sans=sans)

    _write_key(pki / "ca.key", ca_key)
    (pki / "ca.crt").write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    _write_key(pki / "apiserver.key", server_key)
    (pki / "apiserver.crt").write_bytes(server_cert.public_bytes(serialization.Encoding.PEM))

    # The real node: the kubelet's serving certificate (the API server checks it
    # when it calls the kubelet for logs and exec) and the API server's client
    # certificate for those calls (the kubelet checks it against the CA).
    kubelet_key = ec.generate_private_key(ec.SECP256R1())
    kubelet_sans = [x509.DNSName(REAL_NODE), x509.IPAddress(ipaddress.ip_address(layout.real_node_ip))]
    _write_pair(pki, "kubelet", kubelet_key, _certificate(
        REAL_NODE, kubelet_key.public_key(), ca_key, ca_cert.subject, ca=False, sans=kubelet_sans))
    client_key = ec.generate_private_key(ec.SECP256R1())
    _write_pair(pki, "apiserver-kubelet-client", client_key, _certificate(
        "kube-apiserver-kubelet-client", client_key.public_key(), ca_key, ca_cert.subject, ca=False,
        organization="system:masters"))

    sa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    _write_key(pki / "sa.key", sa_key)
    (pki / "sa.pub").write_bytes(sa_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))

    rows = []
    for component, (user, groups) in USERS.items():
        token = secrets.token_hex(24)
        (pki / f"{component}.token").write_text(token)
        rows.append(f'{token},{user},{user},"{groups}"' if groups else f"{token},{user},{user}")
    tokens = pki / "tokens.csv"
    tokens.write_text("\n".join(rows) + "\n")
    tokens.chmod(0o600)
