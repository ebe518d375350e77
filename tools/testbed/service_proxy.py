# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Stand-in for the one kube-proxy rule the real node's pods need.

The testbed runs no kube-proxy, so ClusterIP Services do not work. Pods still
find the API server the in-cluster way, at the `kubernetes` Service's address
(KUBERNETES_SERVICE_HOST, port 443; 10.96.0.1 on the default testbed, 10.<96+N>.0.1
on instance N): the testbed puts that address on
the node's bridge and this forwards its TCP connections, TLS untouched, to the
API server on 127.0.0.1. No other Service is reachable.

    service_proxy.py --listen 10.96.0.1:443 --to 127.0.0.1:16443
"""
from __future__ import annotations

import argparse
import asyncio


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()


async def serve(listen: tuple[str, int], target: tuple[str, int]) -> None:
    async def forward(client_reader, client_writer):
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(*target)
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(_pipe(client_reader, upstream_writer), _pipe(upstream_reader, client_writer))

    server = await asyncio.start_server(forward, *listen)
    async with server:
        await server.serve_forever()


def _address(text: str) -> tuple[str, int]:
    host, port = text.rsplit(":", 1)
    return host, int(port)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--listen", type=_address, required=True)
    parser.add_argument("--to", type=_address, required=True)
    args = parser.parse_args()
    asyncio.run(serve(args.listen, args.to))


if __name__ == "__main__":
    main()
